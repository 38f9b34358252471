import { execFileSync } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseIdentityFile } from '../../src/identity/index.js';
import { type ClusterFixture, clusterFixture, SECRET } from './cluster-fixture.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';
import { type RunningCli, startCli } from './run-cli.js';

// SIGINT/SIGTERM end a run truthfully (issue 23, "Bounded in time, truthful when interrupted"): the
// run is stopped by SIGSTOP at a named boundary (PAR_IDENTITY_FAILPOINT=<point>:stop), the test sends
// the signal to the stopped child and resumes it, so the signal is pending exactly there. The run then
// stops at that safe point: INTERRUPTED on stderr saying what is in place, one JSON document with
// --json, exit 130 (SIGINT) or 143 (SIGTERM), its lock released, no temporary file left.

/** Resolves once `pid` is stopped at its `:stop` failpoint (state T in /proc); rejects if it exits first. */
async function stopped(run: RunningCli): Promise<void> {
  let exited = false;
  void run.exit.then(() => (exited = true));
  for (;;) {
    const stat = await readFile(`/proc/${run.child.pid}/stat`, 'utf8').catch(() => '');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return;
    if (exited) throw new Error(`the run exited before its failpoint: ${run.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs `args` to the failpoint, sends `signals` while it is stopped there, resumes it, and waits for its end. */
async function interruptAt(args: string[], env: Record<string, string>, point: string, signals: NodeJS.Signals[]) {
  const run = startCli(args, { env: { ...env, PAR_IDENTITY_FAILPOINT: `${point}:stop` } });
  run.child.stdin.end();
  await stopped(run);
  // Each signal goes to the main thread (tgkill), not to the process: a process-directed signal may be
  // taken by any of Node's threads, and then reach the event loop after the step boundary it was sent
  // at. Sent to the main thread while it is stopped, it is handled as it resumes, before the boundary.
  for (const signal of signals) toMainThread(run.child.pid!, signal);
  run.child.kill('SIGCONT');
  const exit = await run.exit;
  return { ...exit, stdout: run.stdout(), stderr: run.stderr() };
}

/** tgkill(pid, pid, signal) through python3's ctypes (Node has no thread-directed kill). */
function toMainThread(pid: number, signal: NodeJS.Signals): void {
  const tgkill = process.arch === 'arm64' ? 131 : 234;
  const script = 'import ctypes,sys\nlibc=ctypes.CDLL(None,use_errno=True)\nsys.exit(0 if libc.syscall(int(sys.argv[1]),int(sys.argv[2]),int(sys.argv[2]),int(sys.argv[3]))==0 else ctypes.get_errno() or 1)';
  execFileSync('python3', ['-c', script, String(tgkill), String(pid), String(osConstants.signals[signal])]);
}

/** Exactly one JSON document on stdout: the error envelope. */
function oneDocument(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  expect(lines, stdout).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('rotate-identity and rollback (identity file) stopped by a signal', () => {
  let fx: LocalFixture;
  afterEach(async () => {
    await fx.close();
  });

  async function seeded(): Promise<string> {
    fx = await localFixture();
    const first = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(first.code, first.stderr).toBe(0);
    return fx.read();
  }
  const rotate = () => ['rotate-identity', '-c', fx.dir, '--json'];
  /** The lock is gone and no temporary file is left: only the identity, its backup, the verified mark, the config. */
  async function clean(): Promise<void> {
    const files = await fx.files();
    expect(files.filter((f) => f.includes('.lock') || f.includes('.tmp-'))).toEqual([]);
  }

  it('SIGINT before the enrollment: nothing enrolled or changed, exit 130, one JSON document', async () => {
    const before = await seeded();
    const enrollsBefore = fx.emulator.requests.filter((r) => r.route === 'enroll').length;
    const run = await interruptAt(rotate(), fx.env, 'before-enroll', ['SIGINT']);
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain('error[INTERRUPTED]: stopped by SIGINT before step "enroll the new key": nothing was enrolled or changed: identity file');
    expect(run.stderr).toContain('untouched');
    expect(oneDocument(run.stdout)).toMatchObject({ status: 'error', command: 'rotate-identity', code: 'INTERRUPTED', exitCode: 130, details: { step: 'enroll', phase: 'before', signal: 'SIGINT' } });
    expect(await fx.read()).toBe(before);
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(enrollsBefore);
    await clean();
  });

  it('SIGTERM after the enrollment, before the write: names the runner, whose key stays pending, exit 143, file untouched', async () => {
    const before = await seeded();
    const run = await interruptAt(rotate(), fx.env, 'after-enroll', ['SIGTERM']);
    expect(run.code, run.stderr).toBe(143);
    const doc = oneDocument(run.stdout);
    expect(doc).toMatchObject({ status: 'error', code: 'INTERRUPTED', exitCode: 143, details: { step: 'write', phase: 'before', signal: 'SIGTERM' } });
    expect(doc.message).toMatch(/^stopped by SIGTERM before step "write the new identity": runner urn:dd:apps:on-prem-runner:\S+ was enrolled with Datadog \(key fingerprint \S+\); its private key is kept pending in \S+\.pending, not in service: identity file \S+ otherwise untouched/);
    expect(doc.hint).toContain('Remove urn:dd:apps:on-prem-runner:');
    expect(doc.hint).toContain('possible orphan (exit 15)');
    expect(await fx.read(`${IDENTITY}.pending`)).toContain('"runner_name"');
    expect(run.stderr).toContain('error[INTERRUPTED]: stopped by SIGTERM');
    expect(await fx.read()).toBe(before);
    await clean();
  });

  it('SIGINT after the write, before the verification: the new identity is in place, not verified, not restarted', async () => {
    const before = await seeded();
    const run = await interruptAt(rotate(), fx.env, 'before-verify', ['SIGINT']);
    expect(run.code, run.stderr).toBe(130);
    const live = parseIdentityFile(await fx.read());
    expect(live.urn).not.toBe(parseIdentityFile(before).urn);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(before);
    const doc = oneDocument(run.stdout);
    expect(doc.message).toContain(`the new identity ${live.urn}`);
    expect(doc.message).toContain(`is written to identity file ${join(fx.dir, IDENTITY)}, the previous one kept but not verified; the runner was not restarted`);
    expect(doc.hint).toContain('status');
    expect(doc.hint).toContain('--verify');
    await clean();
  });

  it('SIGINT while the enrollment request is under way: the request is aborted at once, and the message says it was cut off', async () => {
    const before = await seeded();
    // The emulator holds the answer for ten minutes: only an aborted request ends the run in time.
    fx.emulator.script('enroll', { delayMs: 600_000, passThrough: true });
    const run = startCli(rotate(), { env: fx.env });
    run.child.stdin.end();
    const enrolls = () => fx.emulator.requests.filter((r) => r.route === 'enroll').length;
    const seen = enrolls();
    while (enrolls() === seen) await new Promise((resolve) => setTimeout(resolve, 5));
    run.child.kill('SIGINT');
    const exit = await run.exit;
    expect(exit.code, run.stderr()).toBe(130);
    expect(oneDocument(run.stdout()).message).toMatch(/during step "enroll the new key": the enrollment request was cut off, so Datadog may or may not have registered a runner/);
    expect(await fx.read()).toBe(before);
    await clean();
  });

  it('a second signal while the run ends: it ends at once with that signal status, one JSON document, lock gone', async () => {
    await seeded();
    const run = await interruptAt(rotate(), fx.env, 'before-enroll', ['SIGINT', 'SIGTERM']);
    expect(run.code, run.stderr).toBe(143);
    expect(oneDocument(run.stdout)).toMatchObject({ code: 'INTERRUPTED', exitCode: 143, details: { signal: 'SIGTERM' } });
    expect(run.stderr).toContain('then SIGTERM while the run was ending');
    await clean();
  });

  it('rollback stopped before the restore changes nothing (SIGTERM, exit 143)', async () => {
    await seeded();
    expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(0);
    const live = await fx.read();
    const backup = await fx.read(`${IDENTITY}.bak`);
    const run = await interruptAt(['rollback', '-c', fx.dir], fx.env, 'before-restore', ['SIGTERM']);
    expect(run.code, run.stderr).toBe(143);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('error[INTERRUPTED]: stopped by SIGTERM before step "restore the previous identity": nothing was enrolled or changed');
    expect(await fx.read()).toBe(live);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(backup);
    await clean();
  });
});

describe('rotate-par-identity (the cluster agent Secret) stopped by a signal', () => {
  let fx: ClusterFixture;
  afterEach(async () => {
    await fx.close();
  });

  const rotate = () => ['rotate-par-identity', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--json'];

  it('SIGINT after the enrollment, before the write: the Secret keeps its identity, the key sent pending in it, exit 130', async () => {
    fx = await clusterFixture();
    expect((await fx.rotate()).code).toBe(0);
    const before = fx.secretData();
    const run = await interruptAt(rotate(), fx.env, 'after-enroll', ['SIGINT']);
    expect(run.code, run.stderr).toBe(130);
    const doc = oneDocument(run.stdout);
    expect(doc).toMatchObject({ command: 'rotate-par-identity', code: 'INTERRUPTED', exitCode: 130 });
    expect(doc.message).toContain(`its private key is kept pending in Secret`);
    expect(doc.message).toContain(`${SECRET} (data key pending_private_key), not in service`);
    const { pending_private_key: pending, ...after } = fx.secretData();
    expect(after).toEqual(before);
    expect(pending).toContain('"runner_name"');
  });

  it('SIGTERM after the write, before the verification: the Secret holds the new identity, exit 143', async () => {
    fx = await clusterFixture();
    expect((await fx.rotate()).code).toBe(0);
    const previous = fx.secretData().urn;
    const run = await interruptAt(rotate(), fx.env, 'before-verify', ['SIGTERM']);
    expect(run.code, run.stderr).toBe(143);
    const data = fx.secretData();
    expect(data.urn).not.toBe(previous);
    expect(data.previous_urn).toBe(previous);
    const doc = oneDocument(run.stdout);
    expect(doc.message).toContain(`the new identity ${data.urn}`);
    expect(doc.message).toContain('but not verified; the runner was not restarted');
  });

  it('SIGINT before the enrollment with the Secret missing: nothing is created', async () => {
    fx = await clusterFixture();
    const run = await interruptAt(rotate(), fx.env, 'before-enroll', ['SIGINT']);
    expect(run.code, run.stderr).toBe(130);
    expect(oneDocument(run.stdout).message).toContain('nothing was enrolled or changed');
    expect(fx.secret()).toBeUndefined();
  });
});
