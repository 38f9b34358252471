import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLOSED_METADATA_URL, isLoopbackUrl } from '../setup/no-cloud-metadata.js';
import { isHostEnvironmentVariable, NO_HOST_ROOT } from '../setup/no-host-services.js';

// Starts the built binary exactly as an operator would: a real process, real argv, real env.

export const BIN = fileURLToPath(new URL('../../bin/par-identity.js', import.meta.url));

// PAR_IDENTITY_TEST_BIN (npm run test:sea) names a single executable to test instead: started like
// `env -i`, with only the variables the test sets and a PATH (an empty folder) that has no node.
const SINGLE_EXECUTABLE = process.env.PAR_IDENTITY_TEST_BIN
  ? resolve(fileURLToPath(new URL('../../', import.meta.url)), process.env.PAR_IDENTITY_TEST_BIN)
  : undefined;
/** The program name the tool prints in its undo:/next: lines: the single executable as it was started (its path), else par-identity. */
export const PROGRAM = SINGLE_EXECUTABLE ?? 'par-identity';
let pathWithoutNode: string | undefined;
function singleExecutableEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  pathWithoutNode ??= mkdtempSync(join(tmpdir(), 'par-path-without-node-'));
  const env: NodeJS.ProcessEnv = { PATH: pathWithoutNode };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  // The same guards as cleanEnv: cloud metadata only ever on loopback, no host services of the machine.
  const guarded = cleanEnv(extra);
  env.PAR_IDENTITY_CLOUD_METADATA_URL = guarded.PAR_IDENTITY_CLOUD_METADATA_URL;
  env.PAR_IDENTITY_HOST_ROOT = guarded.PAR_IDENTITY_HOST_ROOT;
  return env;
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
  uid?: number;
  gid?: number;
  timeoutMs?: number;
  /** Another copy of the built binary (see portable-bin.ts), for runs as another user. */
  bin?: string;
  /** A single executable to start instead of the built binary, for this run (see launchers.ts). */
  executable?: string;
}

/**
 * Environment without the caller's DD_*, proxies and container/cloud-platform variables (docker,
 * Kubernetes, ECS), so tests see only what they set.
 */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('DD_') && !/_PROXY$/i.test(k) && !isHostEnvironmentVariable(k) && k !== 'PAR_IDENTITY_FAILPOINT') env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  // Cloud metadata only ever on loopback: a closed port unless the test points it at an emulator.
  if (env.PAR_IDENTITY_CLOUD_METADATA_URL === undefined) env.PAR_IDENTITY_CLOUD_METADATA_URL = CLOSED_METADATA_URL;
  if (!isLoopbackUrl(env.PAR_IDENTITY_CLOUD_METADATA_URL))
    throw new Error(`PAR_IDENTITY_CLOUD_METADATA_URL must be a loopback URL in tests, got ${env.PAR_IDENTITY_CLOUD_METADATA_URL}`);
  // No docker socket, ECS config, DMI table or service account of the machine: only what a test sets up.
  if (env.PAR_IDENTITY_HOST_ROOT === undefined) env.PAR_IDENTITY_HOST_ROOT = NO_HOST_ROOT;
  return env;
}

export interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the built binary and keeps collecting its output; for long-running commands too. */
export function startCli(args: string[], options: Omit<RunOptions, 'stdin' | 'timeoutMs'> = {}): RunningCli {
  const executable = options.executable ?? SINGLE_EXECUTABLE;
  const child = spawn(executable ?? process.execPath, executable ? args : [options.bin ?? BIN, ...args], {
    env: executable ? singleExecutableEnv(options.env ?? {}) : cleanEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid }),
  });
  let stdout = '';
  let stderr = '';
  // A command that exits before reading its stdin (a usage error) closes the pipe: writing to it then
  // fails with EPIPE, which is that command's right, not a failure of the test.
  child.stdin.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

export async function runCli(args: string[], options: RunOptions = {}): Promise<CliRun> {
  const running = startCli(args, options);
  const timer = setTimeout(() => running.child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  running.child.stdin.end(options.stdin ?? '');
  try {
    const { code, signal } = await running.exit;
    return { code, signal, stdout: running.stdout(), stderr: running.stderr() };
  } finally {
    clearTimeout(timer);
  }
}
