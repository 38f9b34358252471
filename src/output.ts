import { type ParError, toParError } from './errors.js';
import type { Io } from './io.js';
import type { OutputOptions } from './output-options.js';

// The one boundary between results/errors and the terminal. With --json, stdout carries exactly one
// JSON object (schemaVersion 1) and all human text goes to stderr.

export type { OutputOptions };

export const SCHEMA_VERSION = 1;


export interface CommandResult<D extends object = Record<string, unknown>> {
  command: string;
  /** The --json payload (besides schemaVersion/status/command). Never key material. */
  data: D;
  /** Human summary lines for stdout. */
  summary: string[];
  /** `skipped`: nothing was due (e.g. --if-older-than); the default is `ok`. */
  status?: 'ok' | 'skipped';
}

export interface Reporter {
  step(text: string): void;
  info(text: string): void;
  warn(text: string): void;
}

const paint = (on: boolean, code: number, text: string) => (on ? `\u001b[${code}m${text}\u001b[0m` : text);

export function wantsColor(io: Io, noColorFlag: boolean): boolean {
  return io.isTTY && !noColorFlag && io.env.NO_COLOR === undefined && io.env.TERM !== 'dumb';
}

export function createReporter(io: Io, options: OutputOptions): Reporter {
  const progress = io.progress;
  if (progress) return { step: (text) => progress('step', text), info: (text) => progress('info', text), warn: (text) => progress('warn', text) };
  return {
    step: (text) => io.stderr(`${paint(options.color, 36, '→')} ${text}\n`),
    info: (text) => io.stderr(`  ${text}\n`),
    warn: (text) => io.stderr(`${paint(options.color, 33, 'warning:')} ${text}\n`),
  };
}

/** The --json object of a result (also what the programmatic API returns, after a JSON round trip). */
export function resultObject(result: CommandResult<object>): Record<string, unknown> {
  return { schemaVersion: SCHEMA_VERSION, status: result.status ?? 'ok', command: result.command, ...result.data };
}

export function renderResult(result: CommandResult<object>, io: Io, options: OutputOptions): void {
  if (options.json) {
    io.stdout(`${JSON.stringify(resultObject(result))}\n`);
    for (const line of result.summary) io.stderr(`${line}\n`);
    return;
  }
  for (const line of result.summary) io.stdout(`${line}\n`);
}

export function renderError(err: unknown, io: Io, options: OutputOptions & { command?: string }): number {
  const e: ParError = toParError(err);
  if (options.json) {
    const payload = {
      schemaVersion: SCHEMA_VERSION,
      status: 'error',
      ...(options.command ? { command: options.command } : {}),
      code: e.code,
      exitCode: e.exitCode,
      message: e.message,
      hint: e.hint,
      ...(Object.keys(e.details).length ? { details: e.details } : {}),
    };
    io.stdout(`${JSON.stringify(payload)}\n`);
  }
  io.stderr(`${paint(options.color, 31, `error[${e.code}]:`)} ${e.message}\n${paint(options.color, 2, 'next:')} ${e.hint}\n`);
  return e.exitCode;
}
