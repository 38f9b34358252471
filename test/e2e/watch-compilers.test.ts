import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPILERS_OFF_FLAGS } from '../../src/watch/steady-memory.js';
import { BIN, cleanEnv } from './run-cli.js';

// The npm launcher replaces a `watch` process with a node started without V8's optimising compilers
// (process.execve; docs/architecture.md, "Start-up and memory"): same pid, one result, and no other
// command touched. What the final process ran with is written by a --require'd recorder when it exits.

const work = mkdtempSync(join(tmpdir(), 'par-watch-compilers-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const recorder = join(work, 'recorder.cjs');
writeFileSync(
  recorder,
  "process.on('exit', () => require('node:fs').writeFileSync(process.env.PAR_TEST_RECORD, JSON.stringify({ pid: process.pid, execArgv: process.execArgv })));\n",
);

/** Runs the built launcher under `nodeArgs`; what the process that exited ran with, and its output. */
function run(nodeArgs: string[], args: string[]) {
  const record = join(work, `record-${Math.random().toString(36).slice(2)}.json`);
  // No config anywhere: watch and status end at once with a usage-level error, after the restart.
  const env = cleanEnv({ PAR_TEST_RECORD: record, HOME: work, KUBECONFIG: join(work, 'no-kubeconfig') });
  const child = spawnSync(process.execPath, [...nodeArgs, '--require', recorder, BIN, ...args, '-c', work], { env, encoding: 'utf8' });
  const seen = JSON.parse(readFileSync(record, 'utf8')) as { pid: number; execArgv: string[] };
  return { ...seen, status: child.status, stdout: child.stdout, pid0: child.pid };
}

describe('watch starts without the optimising compilers', () => {
  it.each([
    ['watch --json', ['watch', '--json']],
    ['--json watch (a global flag first)', ['--json', 'watch']],
  ])('%s: restarted in the same process with the flags, one JSON document', (_name, args) => {
    const r = run([], args);
    expect(r.execArgv).toEqual([...COMPILERS_OFF_FLAGS, '--require', recorder]);
    expect(r.pid).toBe(r.pid0);
    expect(r.status).not.toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'error', command: 'watch' });
  });

  it('a node already started with them is not restarted', () => {
    const r = run(['--no-maglev'], ['watch', '--json']);
    expect(r.execArgv).toEqual(['--no-maglev', '--require', recorder]);
    expect(r.pid).toBe(r.pid0);
  });

  it.each([
    ['status', ['status', '--json']],
    ['a command whose argument is the word watch', ['--json', 'status', '--identity-file', 'watch']],
  ])('%s: keeps its compilers (not restarted)', (_name, args) => {
    const r = run([], args);
    expect(r.execArgv).toEqual(['--require', recorder]);
    expect(JSON.parse(r.stdout)).toMatchObject({ command: 'status' });
  });
});
