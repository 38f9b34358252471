import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DecodedIdentity } from '../../src/identity/index.js';
import { ApplyQueue, parseListenAddress, parseSignalName, SupervisedChild, sendSignal } from '../../src/reload/index.js';
import { exitStatusOf } from '../../src/reload/apply-child.js';
import { FakeClock, settle } from './reload-fakes.js';

describe('parseSignalName', () => {
  it.each([
    ['HUP', 'SIGHUP'],
    ['sighup', 'SIGHUP'],
    [' USR1 ', 'SIGUSR1'],
    ['SIGTERM', 'SIGTERM'],
  ])('%s → %s', (input, expected) => expect(parseSignalName(input)).toBe(expected));

  it.each(['', 'NOPE', 'SIG', '1'])('refuses %j as a usage error', (input) => {
    expect(() => parseSignalName(input)).toThrow(expect.objectContaining({ code: 'USAGE', exitCode: 2 }));
  });
});

describe('parseListenAddress', () => {
  it.each([
    ['9090', { port: 9090 }],
    [':9090', { port: 9090 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['localhost:8080', { host: 'localhost', port: 8080 }],
    ['[::1]:9090', { host: '::1', port: 9090 }],
  ])('%s', (input, expected) => expect(parseListenAddress(input)).toEqual(expected));

  it.each(['', 'host', 'host:', ':99999', '::1:80', 'a:b:1'])('refuses %j', (input) => {
    expect(() => parseListenAddress(input)).toThrow(expect.objectContaining({ code: 'USAGE' }));
  });
});

describe('exitStatusOf', () => {
  it('is the code, else 128 + the signal number', () => {
    expect(exitStatusOf(0, null)).toBe(0);
    expect(exitStatusOf(3, null)).toBe(3);
    expect(exitStatusOf(null, 'SIGTERM')).toBe(143);
    expect(exitStatusOf(null, 'SIGKILL')).toBe(137);
  });
});

describe('sendSignal', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('names the pidfile problem, and a process that is gone', async () => {
    dir = await mkdtemp(join(tmpdir(), 'par-signal-'));
    const pidfile = join(dir, 'runner.pid');
    await expect(sendSignal({ pidfile, signal: 'SIGHUP' })).rejects.toMatchObject({ code: 'PIDFILE_UNREADABLE' });
    await writeFile(pidfile, 'not a pid\n');
    await expect(sendSignal({ pidfile, signal: 'SIGHUP' })).rejects.toMatchObject({ code: 'PIDFILE_INVALID' });
    // A pid padded past 4 KiB (a pid and a newline is all a pidfile holds): not read beyond that.
    await writeFile(pidfile, `${' '.repeat(5000)}${process.pid}\n`);
    await expect(sendSignal({ pidfile, signal: 'SIGHUP' })).rejects.toMatchObject({
      code: 'PIDFILE_INVALID',
      message: expect.stringContaining('is larger than 4096 bytes'),
    });
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    await writeFile(pidfile, `${gone.stdout}\n`);
    await expect(sendSignal({ pidfile, signal: 'SIGHUP' })).rejects.toMatchObject({
      code: 'SIGNAL_FAILED',
      details: { pid: Number(gone.stdout), errno: 'ESRCH' },
    });
  });

  it('signals the pid a pidfile holds (read at each call)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'par-signal-'));
    const pidfile = join(dir, 'self.pid');
    await writeFile(pidfile, `${process.pid}\n`);
    let got = 0;
    const onUsr2 = () => got++;
    process.on('SIGUSR2', onUsr2);
    try {
      expect(await sendSignal({ pidfile, signal: 'SIGUSR2' })).toBe(process.pid);
      for (let i = 0; i < 200 && got === 0; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(got).toBe(1);
    } finally {
      process.off('SIGUSR2', onUsr2);
    }
  });
});

describe('ApplyQueue', () => {
  const id = (name: string) => ({ key: { kid: name } }) as unknown as DecodedIdentity;

  function queue(fail: (name: string, n: number) => boolean) {
    const clock = new FakeClock();
    const calls: string[] = [];
    const applied: string[] = [];
    const errors: Array<[number, number]> = [];
    let n = 0;
    const q = new ApplyQueue({
      steps: [
        async (identity, reason) => {
          calls.push(`${reason}:${identity.key.kid}`);
          if (fail(identity.key.kid, ++n)) throw new Error(`fail ${identity.key.kid}`);
        },
      ],
      policy: { initialDelayMs: 100, maxDelayMs: 1000, random: () => 1 },
      clock,
      onApplied: (identity, reason) => applied.push(`${reason}:${identity.key.kid}`),
      onError: (_err, attempt, delay) => errors.push([attempt, delay]),
    });
    return { q, clock, calls, applied, errors };
  }

  it('hands identities on in order, the first as initial and the rest as rotated', async () => {
    const { q, applied } = queue(() => false);
    q.push(id('a'));
    await q.idle();
    q.push(id('b'));
    await q.idle();
    expect(applied).toEqual(['initial:a', 'rotated:b']);
  });

  it('retries a failed hand-over with backoff, and a newer identity replaces the one that failed', async () => {
    const { q, clock, calls, applied, errors } = queue((name, n) => name === 'a' || n === 3);
    q.push(id('a'));
    await settle();
    expect(errors).toEqual([[1, 100]]);
    await clock.wake(100);
    expect(errors).toEqual([
      [1, 100],
      [2, 200],
    ]);
    q.push(id('b'));
    await clock.wake(200);
    expect(errors.at(-1)).toEqual([3, 400]);
    await clock.wake(400);
    await q.idle();
    expect(calls).toEqual(['initial:a', 'initial:a', 'initial:b', 'initial:b']);
    expect(applied).toEqual(['initial:b']);
  });

  it('retries for as long as it fails without collecting abort listeners', async () => {
    const { q, clock, errors } = queue(() => true);
    q.push(id('a'));
    for (let i = 1; i <= 25; i++) {
      await settle();
      await clock.wake(clock.pending()[0]!.ms);
    }
    expect(errors.length).toBeGreaterThanOrEqual(25);
    expect(clock.maxAbortListeners()).toBeLessThanOrEqual(1);
    q.stop();
  });

  it('stop() ends a retry wait', async () => {
    const { q, clock } = queue(() => true);
    q.push(id('a'));
    await settle();
    q.stop();
    await q.idle();
    expect(clock.pending()).toEqual([]);
  });
});

describe('SupervisedChild', () => {
  it('SIGKILLs a command that ignores SIGTERM once the timeout has passed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'par-child-'));
    try {
      const marker = join(dir, 'ready');
      const script =
        "process.on('SIGTERM', () => {}); require('node:fs').writeFileSync(process.argv[1], 'x'); setInterval(() => {}, 1000);";
      const child = new SupervisedChild({
        command: process.execPath,
        args: ['-e', script, marker],
        stdoutToStderr: false,
        stopTimeoutMs: 100,
      });
      child.start(process.env);
      // Until the child has installed its SIGTERM handler (it writes the marker after): however long it takes to start.
      while (!(await readFile(marker, 'utf8').catch(() => ''))) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await child.stop('SIGTERM')).toEqual({ code: null, signal: 'SIGKILL', status: 137 });
      expect(await child.exited).toMatchObject({ signal: 'SIGKILL' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('starts nothing once stopped, so a hand-over still in flight cannot revive it', async () => {
    const child = new SupervisedChild({
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      stdoutToStderr: false,
      stopTimeoutMs: 100,
    });
    expect(await child.stop()).toBeUndefined();
    child.start(process.env);
    await child.restart(process.env);
    expect(child.starts).toBe(0);
    expect(child.pid).toBeUndefined();
  });
});
