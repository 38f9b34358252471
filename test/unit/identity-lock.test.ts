import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ParError } from '../../src/errors.js';
import { acquireIdentityLock, type LockHolder, lockPathOf, readHolder, removeStale } from '../../src/storage/lock.js';
import type { Clock } from '../../src/time/index.js';
import { lockTries } from '../fixtures/lock-tries.js';

const NAME = 'privateactionrunner_private_identity.json';
/** Larger than any pid_max Linux allows (2^22): kill(pid, 0) always says ESRCH. */
const DEAD_PID = 2147483646;

let dir: string;
let path: string;
let lockPath: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-lock-'));
  path = join(dir, NAME);
  lockPath = lockPathOf(path);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function fakeClock(start = Date.UTC(2026, 0, 1)): Clock & { sleeps: number[] } {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    async sleep(ms) {
      sleeps.push(ms);
      now += ms;
    },
  };
}

async function writeLock(holder: Partial<LockHolder>, target = lockPath): Promise<void> {
  await writeFile(
    target,
    JSON.stringify({ pid: DEAD_PID, host: hostname(), since: '2026-01-01T00:00:00.000Z', nonce: 'feedfacefeedface', ...holder }),
    { mode: 0o600 },
  );
}

async function lockedError(promise: Promise<unknown>): Promise<ParError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParError);
  return err as ParError;
}

describe('acquireIdentityLock', () => {
  it('creates <file>.lock 0600 holding pid, host and start time, and release removes it (twice is fine)', async () => {
    const clock = fakeClock();
    const lock = await acquireIdentityLock(path, { clock });
    expect(lock.path).toBe(`${path}.lock`);
    expect((await stat(lockPath)).mode & 0o777).toBe(0o600);
    const content = JSON.parse(await readFile(lockPath, 'utf8')) as LockHolder;
    expect(content).toMatchObject({ pid: process.pid, host: hostname(), since: '2026-01-01T00:00:00.000Z' });
    expect(content.nonce).toMatch(/^[0-9a-f]{16}$/);
    await lock.release();
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('a second acquire while held fails at once with LOCKED, exit 11, naming the holder; nothing else is touched', async () => {
    await writeFile(path, 'identity');
    const lock = await acquireIdentityLock(path);
    const err = await lockedError(acquireIdentityLock(path));
    expect(err.code).toBe('LOCKED');
    expect(err.exitCode).toBe(11);
    expect(err.message).toBe(`${path} is locked by pid ${process.pid} on host ${hostname()} since ${lock.holder.since}`);
    expect(err.hint).toContain('Nothing was changed');
    expect(err.hint).toContain(`remove ${lockPath}`);
    expect(err.details).toMatchObject({ pid: process.pid, host: hostname(), lockPath });
    expect((await readdir(dir)).sort()).toEqual([NAME, `${NAME}.lock`]);
    await lock.release();
  });

  it('waits up to waitSeconds, polling with a jittered interval, then fails', async () => {
    await writeLock({ pid: process.ppid });
    const clock = fakeClock();
    let r = 0;
    const randoms = [0, 0.999, 0.5];
    const err = await lockedError(acquireIdentityLock(path, { waitSeconds: 2, clock, random: () => randoms[r++ % 3]! }));
    expect(err.message).toContain(`locked by pid ${process.ppid}`);
    expect(err.message).toContain('(waited 2 s)');
    expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBeCloseTo(2000, 1);
    expect(clock.sleeps.slice(0, 3).map(Math.round)).toEqual([50, 150, 100]);
    expect(clock.sleeps.every((ms) => ms > 0 && ms <= 150)).toBe(true);
  });

  it('takes the lock once the holder releases it while we wait', async () => {
    const first = await acquireIdentityLock(path);
    let polls = 0;
    const clock: Clock = {
      now: () => 0,
      async sleep() {
        polls++;
        if (polls === 3) await first.release();
      },
    };
    const second = await acquireIdentityLock(path, { waitSeconds: 10, clock });
    expect(polls).toBe(3);
    expect(JSON.parse(await readFile(lockPath, 'utf8')).nonce).toBe(second.holder.nonce);
    await second.release();
  });

  it('takes over a stale lock of a dead pid on this host', async () => {
    await writeLock({ pid: DEAD_PID });
    const lock = await acquireIdentityLock(path);
    expect(JSON.parse(await readFile(lockPath, 'utf8'))).toMatchObject({ pid: process.pid, nonce: lock.holder.nonce });
    // The takeover file went as soon as the stale instance was gone (docs/locking.md §2).
    expect(await readdir(dir)).toEqual([`${NAME}.lock`]);
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('six takeovers in a row leave no takeover file', async () => {
    for (let i = 0; i < 6; i++) {
      await writeLock({ pid: DEAD_PID, nonce: `${i}`.repeat(16) });
      const lock = await acquireIdentityLock(path);
      await lock.release();
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('a late taker that read the stale nonce before the takeover ended wins the takeover name but unlinks nothing', async () => {
    await writeLock({ pid: DEAD_PID, nonce: 'feedfacefeedface' });
    const stale = JSON.parse(await readFile(lockPath, 'utf8')) as LockHolder;
    const winner = await acquireIdentityLock(path);
    // The loser read instance feedface… a moment ago; the winner's guard is gone, so it gets the name,
    // re-reads the lock, finds the winner's nonce and leaves it; its own guard goes too.
    const late: LockHolder = { pid: process.pid, host: hostname(), since: '2026-01-01T00:00:01.000Z', nonce: '1234567812345678' };
    expect(await removeStale(lockPath, stale, late)).toBe(true);
    expect(JSON.parse(await readFile(lockPath, 'utf8')).nonce).toBe(winner.holder.nonce);
    expect(await readdir(dir)).toEqual([`${NAME}.lock`]);
    await winner.release();
  });

  it('a reading run (takeOver: false) leaves a stale lock in place and reports it LOCKED with why it is stale', async () => {
    await writeLock({ pid: DEAD_PID });
    const err = await lockedError(acquireIdentityLock(path, { takeOver: false }));
    expect(err.code).toBe('LOCKED');
    expect(err.details.stale).toBe(`pid ${DEAD_PID} is gone`);
    expect(await readdir(dir)).toEqual([`${NAME}.lock`]);
  });

  it('takes over when the pid now belongs to a process started after the lock (pid reuse)', async () => {
    await writeLock({ pid: process.ppid, procStart: 1 });
    const lock = await acquireIdentityLock(path);
    expect(lock.holder.pid).toBe(process.pid);
    await lock.release();
  });

  it('never treats a lock from another host as stale, and says so', async () => {
    await writeLock({ pid: DEAD_PID, host: 'other-host.example' });
    const err = await lockedError(acquireIdentityLock(path));
    expect(err.message).toBe(`${path} is locked by pid ${DEAD_PID} on host other-host.example since 2026-01-01T00:00:00.000Z`);
    expect(err.hint).toContain('never treated as stale automatically');
    expect(JSON.parse(await readFile(lockPath, 'utf8')).host).toBe('other-host.example');
  });

  it('a lock file that names no holder is reported, not removed', async () => {
    await writeFile(lockPath, 'garbage');
    const err = await lockedError(acquireIdentityLock(path));
    expect(err.code).toBe('LOCKED');
    expect(err.message).toContain('does not name a holder');
    expect(await readFile(lockPath, 'utf8')).toBe('garbage');
  });

  it('a FIFO, a directory or an oversized file at the lock name names no holder, and is read without blocking', async () => {
    execFileSync('mkfifo', [lockPath]);
    expect(await readHolder(lockPath)).toBe('unreadable');
    expect((await lockedError(acquireIdentityLock(path))).message).toContain('does not name a holder');
    await rm(lockPath);
    await mkdir(lockPath);
    expect(await readHolder(lockPath)).toBe('unreadable');
    await rm(lockPath, { recursive: true });
    // A valid holder padded past what any lock of ours holds.
    await writeFile(
      lockPath,
      JSON.stringify({ pid: DEAD_PID, host: hostname(), since: '2026-01-01T00:00:00.000Z', nonce: '0123456789abcdef' }) + ' '.repeat(5000),
    );
    expect(await readHolder(lockPath)).toBe('unreadable');
  });

  it('two takers of the same stale lock: exactly one wins', async () => {
    await writeLock({ pid: DEAD_PID });
    const results = await Promise.allSettled([acquireIdentityLock(path), acquireIdentityLock(path), acquireIdentityLock(path)]);
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as ParError).code).toBe('LOCKED');
    expect(await readdir(dir)).toEqual([`${NAME}.lock`]);
    await (won[0] as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('a taker that crashed mid-takeover does not block the lock forever', async () => {
    await writeLock({ pid: DEAD_PID, nonce: 'aaaaaaaaaaaaaaaa' });
    await writeLock({ pid: DEAD_PID, nonce: 'bbbbbbbbbbbbbbbb' }, `${lockPath}.takeover-aaaaaaaaaaaaaaaa`);
    const lock = await acquireIdentityLock(path);
    expect(JSON.parse(await readFile(lockPath, 'utf8')).nonce).toBe(lock.holder.nonce);
    // The crashed taker's guard, the guard that removed it and our own guard are all gone.
    expect(await readdir(dir)).toEqual([`${NAME}.lock`]);
    await lock.release();
  });

  it('release leaves a lock that is no longer ours in place', async () => {
    const lock = await acquireIdentityLock(path);
    await writeLock({ pid: process.ppid, nonce: '5e5e5e5e5e5e5e5e' });
    await lock.release();
    expect(JSON.parse(await readFile(lockPath, 'utf8')).nonce).toBe('5e5e5e5e5e5e5e5e');
  });

  it('sweeps takeover files older than an hour, only those whose suffix has the nonce form', async () => {
    const odd = `${lockPath}.takeover-0ld`;
    await writeLock({}, odd);
    const old = `${lockPath}.takeover-0123456789abcdef`;
    await writeLock({}, old);
    const past = new Date(Date.now() - 2 * 3600_000);
    await utimes(old, past, past);
    await utimes(odd, past, past);
    const lock = await acquireIdentityLock(path);
    await lock.release();
    expect(await readdir(dir)).toEqual([basename(odd)]);
  });
});

describe('two real processes contending for one lock', () => {
  let bundleDir: string;
  let script: string;
  beforeAll(async () => {
    bundleDir = await mkdtemp(join(tmpdir(), 'par-lock-bundle-'));
    await build({
      entryPoints: [fileURLToPath(new URL('../../src/storage/lock.ts', import.meta.url))],
      outfile: join(bundleDir, 'lock.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'silent',
    });
    // Takes the lock, says so, holds it until stdin closes (or for HOLD_MS), then releases.
    script = join(bundleDir, 'holder.mjs');
    await writeFile(
      script,
      `import { appendFileSync } from 'node:fs';
import { acquireIdentityLock } from './lock.mjs';
const [path, wait, log, rounds] = process.argv.slice(2);
for (let i = 0; i < Number(rounds ?? 1); i++) {
  let lock;
  try {
    lock = await acquireIdentityLock(path, { waitSeconds: Number(wait), pollMs: 10 });
  } catch (err) {
    process.stdout.write('error ' + err.code + ' ' + err.exitCode + ' ' + err.message + '\\n');
    process.exitCode = err.exitCode;
    break;
  }
  if (log) {
    appendFileSync(log, 'enter ' + process.pid + '\\n');
    await new Promise((r) => setTimeout(r, 5));
    appendFileSync(log, 'leave ' + process.pid + '\\n');
    await lock.release();
    continue;
  }
  process.stdout.write('acquired\\n');
  await new Promise((r) => { process.stdin.on('end', r); process.stdin.resume(); });
  await lock.release();
  process.stdout.write('released\\n');
}
`,
    );
  });
  afterAll(async () => {
    await rm(bundleDir, { recursive: true, force: true });
  });

  function startHolder(args: string[]): {
    child: ChildProcessWithoutNullStreams;
    output: () => string;
    line: (text: string) => Promise<void>;
    exit: Promise<number | null>;
  } {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const waiters: { text: string; resolve: () => void }[] = [];
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (const w of waiters) if (out.includes(w.text)) w.resolve();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return {
      child,
      output: () => out,
      line: (text) => (out.includes(text) ? Promise.resolve() : new Promise((resolve) => waiters.push({ text, resolve }))),
      exit,
    };
  }

  it('the second process fails with LOCKED (exit 11) while the first holds it, and gets it after release when waiting', async () => {
    const first = startHolder([path, '0']);
    await first.line('acquired');
    const refused = startHolder([path, '0']);
    expect(await refused.exit).toBe(11);
    expect(refused.output()).toContain(`error LOCKED 11 ${path} is locked by pid ${first.child.pid} on host ${hostname()}`);

    const tries = lockTries(dir, basename(lockPath));
    const waiting = startHolder([path, '30']);
    // The waiter cannot get it while the first still holds it: it has tried twice, and not said
    // "acquired" (a waiter that gave up after its first try has exited with LOCKED by then).
    await Promise.race([tries.seen(2), waiting.exit]);
    tries.close();
    expect(waiting.output()).toBe('');
    first.child.stdin.end();
    await first.line('released');
    await waiting.line('acquired');
    expect(JSON.parse(await readFile(lockPath, 'utf8')).pid).toBe(waiting.child.pid);
    waiting.child.stdin.end();
    expect(await waiting.exit).toBe(0);
    expect(await first.exit).toBe(0);
    expect(await readdir(dir)).toEqual([]);
  });

  it('four processes × 10 rounds: the critical sections never interleave', async () => {
    const log = join(dir, 'sections.log');
    const runs = Array.from({ length: 4 }, () => startHolder([path, '60', log, '10']));
    const codes = await Promise.all(runs.map((r) => r.exit));
    expect(codes, runs.map((r) => r.output()).join('\n')).toEqual([0, 0, 0, 0]);
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(80);
    for (let i = 0; i < lines.length; i += 2) {
      const pid = lines[i]!.split(' ')[1];
      expect([lines[i], lines[i + 1]]).toEqual([`enter ${pid}`, `leave ${pid}`]);
    }
  });

  it('a holder killed with SIGKILL leaves a stale lock that the next process takes over', async () => {
    const first = startHolder([path, '0']);
    await first.line('acquired');
    first.child.kill('SIGKILL');
    await first.exit;
    expect(JSON.parse(await readFile(lockPath, 'utf8')).pid).toBe(first.child.pid);
    const next = startHolder([path, '0']);
    await next.line('acquired');
    expect(JSON.parse(await readFile(lockPath, 'utf8')).pid).toBe(next.child.pid);
    next.child.stdin.end();
    expect(await next.exit).toBe(0);
  });
});
