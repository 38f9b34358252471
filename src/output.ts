import { errorEnvelope, SCHEMA_VERSION } from './error-envelope.js';
import { type ParError, toParError } from './errors.js';
import type { Io } from './io.js';
import type { OutputOptions } from './output-options.js';
import type { Envelope } from './results/envelope.js';
import { maskHeldSecrets } from './secrets-held.js';

// The one boundary between results/errors and the terminal. With --json, stdout carries exactly one
// JSON object (schemaVersion 1) and all human text goes to stderr. Whatever passes here has every
// secret the process holds masked (secrets-held.ts), whether or not it went through the sanitizer.

export type { OutputOptions };

export { SCHEMA_VERSION };

/** What a command answers: the --json object (what the API returns; its types are src/results) and the human summary. */
export interface CommandResult<J extends Envelope = Envelope> {
  /** schemaVersion, status (`skipped`: nothing was due, e.g. --if-older-than), command, then the command's fields. Never key material. */
  json: J;
  /** Human summary lines for stdout. */
  summary: string[];
  /** A result that is not a success for a runbook (status predicting a re-enrollment: ExitCode.reenrollPredicted); default 0. */
  exitCode?: number;
}

export interface Reporter {
  step(text: string): void;
  info(text: string): void;
  warn(text: string): void;
  /** Printed only at the verbose level (-v). */
  detail(text: string): void;
}

const paint = (on: boolean, code: number, text: string) => (on ? `\u001b[${code}m${text}\u001b[0m` : text);

export function wantsColor(io: Io, noColorFlag: boolean): boolean {
  return io.isTTY && !noColorFlag && io.env.NO_COLOR === undefined && io.env.TERM !== 'dumb';
}

export function createReporter(io: Io, options: OutputOptions): Reporter {
  const progress = io.progress;
  const m = maskHeldSecrets;
  if (progress)
    return {
      step: (text) => progress('step', m(text)),
      info: (text) => progress('info', m(text)),
      warn: (text) => progress('warn', m(text)),
      detail: () => undefined,
    };
  const none = () => undefined;
  if (io.level === 'quiet') return { step: none, info: none, warn: none, detail: none };
  return {
    step: (text) => io.stderr(`${paint(options.color, 36, '→')} ${m(text)}\n`),
    info: (text) => io.stderr(`  ${m(text)}\n`),
    warn: (text) => io.stderr(`${paint(options.color, 33, 'warning:')} ${m(text)}\n`),
    detail: io.level === 'verbose' ? (text) => io.stderr(`  ${paint(options.color, 2, m(text))}\n`) : none,
  };
}

/** A command's --json object: the envelope, then its fields. */
export function resultJson<C extends string, F extends object>(command: C, fields: F): Envelope<C, 'ok'> & F {
  return { schemaVersion: SCHEMA_VERSION, status: 'ok', command, ...fields };
}

export function renderResult(result: CommandResult, io: Io, options: OutputOptions): void {
  if (options.json) {
    io.stdout(`${maskHeldSecrets(JSON.stringify(result.json))}\n`);
    if (io.level !== 'quiet') for (const line of result.summary) io.stderr(`${maskHeldSecrets(line)}\n`);
    return;
  }
  for (const line of result.summary) io.stdout(`${maskHeldSecrets(line)}\n`);
}

export function renderError(err: unknown, io: Io, options: OutputOptions & { command?: string }): number {
  const e: ParError = toParError(err);
  if (options.json) {
    io.stdout(`${maskHeldSecrets(JSON.stringify(errorEnvelope(e, options.command)))}\n`);
  }
  io.stderr(
    `${paint(options.color, 31, `error[${e.code}]:`)} ${maskHeldSecrets(e.message)}\n${paint(options.color, 2, 'next:')} ${maskHeldSecrets(e.hint)}\n`,
  );
  return e.exitCode;
}
