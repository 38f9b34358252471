import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv, runCli } from './run-cli.js';

// bin/par-identity.js answers a pure help request from dist/help.js without importing the bundle
// (docs/architecture.md, "Start-up and memory"). Whatever path it takes, the output must be the full
// path's, byte for byte: PAR_IDENTITY_NO_FAST_HELP=1 forces the full path to compare with.

const COMMANDS = [
  'rotate-identity',
  'rotate-par-identity',
  'status',
  'rollback',
  'credentials',
  'rollout',
  'completion',
  'emulator',
  'watch',
  'version',
];
const FULL = { PAR_IDENTITY_NO_FAST_HELP: '1' };

const FAST_FORMS = [
  [],
  ['--help'],
  ['-h'],
  ['help'],
  ['--version'],
  ['-V'],
  ...COMMANDS.flatMap((c) => [
    [c, '--help'],
    [c, '-h'],
    ['help', c],
  ]),
];
// Not pure help requests (or help the launcher does not keep): the full path answers, as before.
const OTHER_FORMS = [
  ['help', 'help'],
  ['help', 'nope'],
  ['nope', '--help'],
  ['help', 'constructor'],
  ['help', '__proto__'],
  ['--json', '--help'],
  ['status', '--json', '--help'],
  ['--help', 'status'],
  ['status', '--help', 'extra'],
  ['-h', '-h'],
  ['--version', '--json'],
  ['help', 'status', 'rollback'],
];

async function bothPaths(args: string[]) {
  const [fast, full] = await Promise.all([runCli(args), runCli(args, { env: FULL })]);
  return { fast, full };
}

describe('fast help: the same bytes as commander', () => {
  it.each(FAST_FORMS.map((args) => [args.join(' ') || '(no arguments: the program help, exit 0)', args]))(
    'par-identity %s',
    async (_, args) => {
      const { fast, full } = await bothPaths(args as string[]);
      expect(full.code).toBe(0);
      expect(full.stdout.length).toBeGreaterThan(0);
      expect(fast).toEqual(full);
    },
  );

  it.each(OTHER_FORMS.map((args) => [args.join(' ') || '(no arguments)', args]))(
    'par-identity %s: same output and status as the full path',
    async (_, args) => {
      const { fast, full } = await bothPaths(args as string[]);
      expect(fast).toEqual(full);
    },
  );

  it('help of an unknown command is still a usage error: the program help on stderr, exit 2', async () => {
    const run = await runCli(['help', 'nope']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^Usage: par-identity /);
  });
});

// On a terminal commander wraps help to its columns: the fast path answers only at widths it holds a
// text for, and either way the bytes are the full path's. `script` gives the run a terminal.
const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
describe.skipIf(!hasScript || Boolean(process.env.PAR_IDENTITY_TEST_BIN))('fast help on a terminal', () => {
  const onTerminal = (columns: number, args: string[], env: Record<string, string> = {}) => {
    const line = `stty cols ${columns}; exec ${[process.execPath, BIN, ...args].map((w) => `'${w}'`).join(' ')}`;
    const run = spawnSync('script', ['-qec', line, '/dev/null'], { env: cleanEnv(env), encoding: 'utf8', timeout: 20_000 });
    return { status: run.status, stdout: run.stdout };
  };

  it.each([40, 79, 80, 100, 132, 200, 400, 500])('%i columns', (columns) => {
    for (const args of [['--help'], ['watch', '-h'], ['help', 'status']]) {
      const fast = onTerminal(columns, args);
      expect(fast.status).toBe(0);
      expect(fast.stdout, args.join(' ')).toBe(onTerminal(columns, args, FULL).stdout);
    }
  });
});
