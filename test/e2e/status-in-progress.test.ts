import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClusterFixture, clusterFixture, NS, SECRET } from './cluster-fixture.js';
import { stopped } from './interrupt-at.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';
import { type RunningCli, startCli } from './run-cli.js';

// A live rotation is never an orphan (docs/identity-lifecycle.md §3): the pending key names the run
// that keeps it (host, pid and start time, deadline). `status` says "rotation in progress" (exit 0)
// while that run lives (same host: its pid; another host: its deadline plus a margin), and a possible
// orphan (exit 15) only after. And `status --json` for scripts (docs/output.md): a status word, the
// exit status, every finding whatever the exit precedence. All against the built binary.

interface Holder {
  host: string;
  pid: number;
  deadline: string | null;
  lives: boolean;
  checkedBy: string;
  why: string;
}
interface Key {
  path: string;
  state: string;
  fingerprint: string | null;
  holder?: Holder;
}
interface StatusJson {
  status: string;
  exitCode: number;
  findings: { kind: string; exitCode: number; message: string; path?: string; fingerprint?: string | null }[];
  possibleOrphans: Key[];
  rotationsInProgress: Key[];
}

let fx: LocalFixture | undefined;
let cluster: ClusterFixture | undefined;
/** The rotation a test stopped at its failpoint: killed after the test if it is still there. */
let live: RunningCli | undefined;

afterEach(async () => {
  if (live && live.child.exitCode === null && live.child.signalCode === null) {
    live.child.kill('SIGKILL');
    await live.exit;
  }
  live = undefined;
  await fx?.close();
  await cluster?.close();
  fx = undefined;
  cluster = undefined;
});

/** Starts `args` and waits until it is stopped (SIGSTOP, alive) right after its enrollment: its pending key is written. */
async function stoppedAfterEnroll(args: string[], env: Record<string, string>): Promise<RunningCli> {
  const run = startCli(args, { env: { ...env, PAR_IDENTITY_FAILPOINT: 'after-enroll:stop' } });
  run.child.stdin.end();
  await stopped(run);
  live = run;
  return run;
}

async function killed(run: RunningCli): Promise<void> {
  run.child.kill('SIGKILL');
  expect((await run.exit).signal).toBe('SIGKILL');
}

const parse = (stdout: string) => JSON.parse(stdout) as StatusJson;
const kinds = (s: StatusJson) => s.findings.map((f) => [f.kind, f.exitCode]);

/** The record's holder, as the tool writes it (docs/identity-lifecycle.md §3), for a run on `host`. */
const handWritten = (host: string, deadlineMs: number, extra: Record<string, unknown> = {}) => ({
  host,
  pid: 4242,
  pid_start: 1,
  boot_id: null,
  pid_namespace: null,
  deadline_ms: deadlineMs,
  ...extra,
});

describe('status during a rotation of the identity file', () => {
  const pendingOf = () => join(fx!.dir, `${IDENTITY}.pending`);
  const status = async (env: Record<string, string> = {}) => {
    const run = await fx!.run(['status', '-c', fx!.dir, '--json'], { env });
    return { code: run.code, json: parse(run.stdout), stderr: run.stderr };
  };
  const rewritePending = async (change: (record: Record<string, unknown>) => void) => {
    const record = JSON.parse(await readFile(pendingOf(), 'utf8')) as Record<string, unknown>;
    change(record);
    await writeFile(pendingOf(), JSON.stringify(record), { mode: 0o600 });
  };
  const rotated = async () => {
    fx = await localFixture();
    const first = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(first.code, first.stderr).toBe(0);
  };
  const rotating = () => stoppedAfterEnroll(['rotate-identity', '-c', fx!.dir, '--no-verify'], fx!.env);

  it('while rotate-identity holds the lock and its pending key: "rotation in progress", exit 0, no orphan; once it ends, nothing is left', async () => {
    await rotated();
    const run = await rotating();
    const sent = fx!.emulator.runners.at(-1)!;
    const during = await status();
    expect(during.code, during.stderr).toBe(0);
    expect(during.json.status).toBe('rotation-in-progress');
    expect(during.json.exitCode).toBe(0);
    expect(during.json.possibleOrphans).toEqual([]);
    expect(during.json.rotationsInProgress).toEqual([
      expect.objectContaining({
        path: pendingOf(),
        state: 'pending',
        fingerprint: sent.publicKeyThumbprint,
        holder: expect.objectContaining({ host: hostname(), pid: run.child.pid, lives: true, checkedBy: 'process' }),
      }),
    ]);
    expect(kinds(during.json)).toEqual([['rotation-in-progress', 0]]);
    const human = await fx!.run(['status', '-c', fx!.dir]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`ROTATION IN PROGRESS: the key ${sent.publicKeyThumbprint}`);
    expect(human.stdout).not.toContain('POSSIBLE ORPHAN');

    run.child.kill('SIGCONT');
    expect((await run.exit).code).toBe(0);
    const after = await status();
    expect(after.code, after.stderr).toBe(0);
    expect(after.json).toMatchObject({ status: 'ok', exitCode: 0, findings: [], possibleOrphans: [], rotationsInProgress: [] });
  });

  it('the same key once its holder is killed (kill -9): a possible orphan, exit 15, naming the gone pid', async () => {
    await rotated();
    const run = await rotating();
    await killed(run);
    const after = await status();
    expect(after.code, after.stderr).toBe(15);
    expect(after.json.status).toBe('possible-orphan');
    expect(after.json.rotationsInProgress).toEqual([]);
    expect(after.json.possibleOrphans[0]!.holder).toMatchObject({
      pid: run.child.pid,
      lives: false,
      checkedBy: 'process',
      why: `pid ${run.child.pid} on host ${hostname()} is gone`,
    });
    expect(kinds(after.json)).toEqual([['possible-orphan', 15]]);
  });

  it('a pending record of an older version (no holder): in progress while a live run holds the lock, a possible orphan once it is gone', async () => {
    await rotated();
    const run = await rotating();
    await rewritePending((r) => delete r.holder);
    const during = await status();
    expect(during.code, during.stderr).toBe(0);
    expect(during.json.rotationsInProgress[0]!.holder).toMatchObject({
      pid: run.child.pid,
      lives: true,
      checkedBy: 'lock',
      deadline: null,
    });
    await killed(run);
    const after = await status();
    expect(after.code, after.stderr).toBe(15);
    expect(after.json.possibleOrphans).toEqual([expect.objectContaining({ path: pendingOf(), state: 'pending' })]);
    expect(after.json.possibleOrphans[0]!.holder).toBeUndefined();
  });

  it('a holder on another host: in progress until its deadline and the margin have passed, a possible orphan after; a reused pid is no holder', async () => {
    await rotated();
    await killed(await rotating());
    const now = Date.now();
    // Ahead, and passed by less than the margin (2 min): the run there may still be writing.
    for (const deadline of [now + 60_000, now - 30_000]) {
      await rewritePending((r) => (r.holder = handWritten('build-runner-7', deadline)));
      const ahead = await status();
      expect(ahead.code, ahead.stderr).toBe(0);
      expect(ahead.json.status).toBe('rotation-in-progress');
      expect(ahead.json.rotationsInProgress[0]!.holder).toMatchObject({
        host: 'build-runner-7',
        pid: 4242,
        deadline: new Date(deadline).toISOString(),
        lives: true,
        checkedBy: 'deadline',
      });
    }
    await rewritePending((r) => (r.holder = handWritten('build-runner-7', now - 10 * 60_000)));
    const passed = await status();
    expect(passed.code, passed.stderr).toBe(15);
    expect(passed.json.possibleOrphans[0]!.holder).toMatchObject({ host: 'build-runner-7', lives: false, checkedBy: 'deadline' });
    expect(passed.json.possibleOrphans[0]!.holder!.why).toContain('passed');

    // This host, a pid that runs (this test's own process) but started at another time: not the holder.
    const start = Number(readFileSync(`/proc/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]);
    await rewritePending((r) => (r.holder = handWritten(hostname(), now + 60_000, { pid: process.pid, pid_start: start + 1 })));
    const reused = await status();
    expect(reused.code, reused.stderr).toBe(15);
    expect(reused.json.possibleOrphans[0]!.holder).toMatchObject({
      lives: false,
      checkedBy: 'process',
      why: `pid ${process.pid} on host ${hostname()} now belongs to another process`,
    });
  });

  it('--json for scripts: a word, exitCode and every finding for 0, 14, 15 and 14 with 15', async () => {
    await rotated();
    const clean = await status();
    expect(clean.code).toBe(0);
    expect(clean.json).toMatchObject({ status: 'ok', exitCode: 0, findings: [] });
    const moved = { DD_HOSTNAME: 'another-host' };
    const reenroll = await status(moved);
    expect(reenroll.code).toBe(14);
    expect(reenroll.json).toMatchObject({ status: 'reenroll-predicted', exitCode: 14 });
    expect(kinds(reenroll.json)).toEqual([['reenroll-predicted', 14]]);
    expect(reenroll.json.findings[0]!.message).toContain('another-host');

    await killed(await rotating());
    const orphan = await status();
    expect(orphan.code).toBe(15);
    expect(orphan.json).toMatchObject({ status: 'possible-orphan', exitCode: 15 });
    expect(orphan.json.findings).toEqual([
      expect.objectContaining({
        kind: 'possible-orphan',
        exitCode: 15,
        path: pendingOf(),
        fingerprint: fx!.emulator.runners.at(-1)!.publicKeyThumbprint,
      }),
    ]);

    // Both: the re-enrollment keeps the exit status (14), and the orphan is still in the list.
    const both = await status(moved);
    expect(both.code).toBe(14);
    expect(both.json).toMatchObject({ status: 'reenroll-predicted', exitCode: 14 });
    expect(kinds(both.json)).toEqual([
      ['reenroll-predicted', 14],
      ['possible-orphan', 15],
    ]);
  });
});

describe('status during a rotation of the cluster agent Secret', () => {
  const status = async () => {
    const run = await cluster!.run(['status', '--secret', '-c', cluster!.dir, '--kubeconfig', cluster!.adminKubeconfig, '--json']);
    return { code: run.code, json: parse(run.stdout), stderr: run.stderr };
  };
  const PENDING_PATH = `Secret ${NS}/${SECRET} key pending_private_key`;
  const rewritePending = (change: (record: Record<string, unknown>) => void) => {
    const secret = cluster!.secret()!;
    const data = { ...(secret.data as Record<string, string>) };
    const record = JSON.parse(Buffer.from(data.pending_private_key!, 'base64').toString('utf8')) as Record<string, unknown>;
    change(record);
    data.pending_private_key = Buffer.from(JSON.stringify(record)).toString('base64');
    cluster!.kube.updateObject({ ...secret, data } as never);
  };

  it('while rotate-par-identity enrolls (its pending key in the Secret): "rotation in progress", exit 0; killed, a possible orphan', async () => {
    cluster = await clusterFixture();
    expect((await cluster.rotate(['--no-verify'])).code).toBe(0);
    const run = await stoppedAfterEnroll(
      ['rotate-par-identity', '-c', cluster.dir, '--kubeconfig', cluster.adminKubeconfig, '--no-verify'],
      cluster.env,
    );
    expect(cluster.secretData().pending_private_key).toBeTruthy();
    const during = await status();
    expect(during.code, during.stderr).toBe(0);
    expect(during.json.status).toBe('rotation-in-progress');
    expect(during.json.possibleOrphans).toEqual([]);
    expect(during.json.rotationsInProgress).toEqual([
      expect.objectContaining({
        path: PENDING_PATH,
        holder: expect.objectContaining({ pid: run.child.pid, lives: true, checkedBy: 'process' }),
      }),
    ]);
    expect(kinds(during.json)).toEqual([['rotation-in-progress', 0]]);

    await killed(run);
    const after = await status();
    expect(after.code, after.stderr).toBe(15);
    expect(after.json.status).toBe('possible-orphan');
    expect(after.json.possibleOrphans[0]!.holder).toMatchObject({ pid: run.child.pid, lives: false });
  });

  it('a holder on another host (a Job elsewhere): in progress while its deadline is ahead, a possible orphan once it has passed', async () => {
    cluster = await clusterFixture();
    expect((await cluster.rotate(['--no-verify'])).code).toBe(0);
    await killed(
      await stoppedAfterEnroll(
        ['rotate-par-identity', '-c', cluster.dir, '--kubeconfig', cluster.adminKubeconfig, '--no-verify'],
        cluster.env,
      ),
    );
    rewritePending((r) => (r.holder = handWritten('par-rotate-job-x7k2p', Date.now() + 5 * 60_000)));
    const ahead = await status();
    expect(ahead.code, ahead.stderr).toBe(0);
    expect(ahead.json.rotationsInProgress[0]!.holder).toMatchObject({ host: 'par-rotate-job-x7k2p', lives: true, checkedBy: 'deadline' });
    rewritePending((r) => (r.holder = handWritten('par-rotate-job-x7k2p', Date.now() - 10 * 60_000)));
    const passed = await status();
    expect(passed.code, passed.stderr).toBe(15);
    expect(passed.json.possibleOrphans[0]!.holder).toMatchObject({ lives: false, checkedBy: 'deadline' });
  });

  it('status --pods: Pods on another identity exit 17 (pods-on-another-identity); all on the identity in service exit 0; -A carries exitCode too', async () => {
    cluster = await clusterFixture();
    expect((await cluster.rotate(['--no-verify'])).code).toBe(0);
    const { fingerprint } = (await status()).json as unknown as { fingerprint: string };
    cluster.kube.createObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'datadog-cluster-agent', namespace: NS },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'dca' } },
        template: { metadata: { labels: { app: 'dca' } }, spec: { containers: [{ name: 'a', image: 'x' }] } },
      },
    } as never);
    const pod = (name: string, fp: string) =>
      cluster!.kube.createObject({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: NS, labels: { app: 'dca' }, annotations: { 'par-identity.datadoghq.com/identity-fingerprint': fp } },
        spec: { containers: [{ name: 'a', image: 'x' }] },
      } as never);
    pod('dca-1', fingerprint);
    pod('dca-2', 'an-older-fingerprint');
    const pods = (json: boolean) =>
      cluster!.run([
        'status',
        '--secret',
        '--pods',
        '-c',
        cluster!.dir,
        '--kubeconfig',
        cluster!.adminKubeconfig,
        ...(json ? ['--json'] : []),
      ]);
    const mixed = await pods(true);
    expect(mixed.code, mixed.stderr).toBe(17);
    expect(parse(mixed.stdout)).toMatchObject({ status: 'pods-on-another-identity', exitCode: 17 });
    expect(kinds(parse(mixed.stdout))).toEqual([['pods-on-another-identity', 17]]);
    expect((await pods(false)).code).toBe(17);

    cluster.kube.deleteObject('v1', 'Pod', NS, 'dca-2');
    const current = await pods(true);
    expect(current.code, current.stderr).toBe(0);
    expect(parse(current.stdout)).toMatchObject({ status: 'ok', exitCode: 0, findings: [] });

    const all = await cluster.run(['status', '-A', '--kubeconfig', cluster.adminKubeconfig, '--json']);
    expect(all.code, all.stderr).toBe(0);
    expect(parse(all.stdout)).toMatchObject({ status: 'ok', exitCode: 0, findings: [] });
  });
});

describe('a second rotation of the Secret while one is under way', () => {
  it('is refused (LOCKED, exit 11) before it enrolls or touches the pending key; the first then completes', async () => {
    cluster = await clusterFixture();
    expect((await cluster.rotate(['--no-verify'])).code).toBe(0);
    const first = await stoppedAfterEnroll(
      ['rotate-par-identity', '-c', cluster.dir, '--kubeconfig', cluster.adminKubeconfig, '--no-verify'],
      cluster.env,
    );
    const pending = cluster.secretData().pending_private_key;
    const runners = cluster.enrollment.runners.length;
    for (const dryRun of [true, false]) {
      const second = await cluster.rotate(['--no-verify', '--json', ...(dryRun ? ['--dry-run'] : [])]);
      expect(second.code, second.stderr).toBe(11);
      const error = JSON.parse(second.stdout) as { code: string; message: string; hint: string; details: { pid: number } };
      expect(error.code).toBe('LOCKED');
      expect(error.message).toContain(`pid ${first.child.pid} on host ${hostname()} is running`);
      expect(error.details.pid).toBe(first.child.pid);
    }
    // Nothing enrolled, nothing set aside: the first run's key is still its pending key.
    expect(cluster.enrollment.runners).toHaveLength(runners);
    expect(cluster.secretData().pending_private_key).toBe(pending);
    expect(Object.keys(cluster.secretData()).filter((k) => k.startsWith('orphan_private_key.'))).toEqual([]);

    first.child.kill('SIGCONT');
    expect((await first.exit).code).toBe(0);
    expect(cluster.secretData().urn).toMatch(new RegExp(`:${cluster.enrollment.runners.at(-1)!.runnerId}$`));
    const after = await cluster.run(['status', '--secret', '-c', cluster.dir, '--kubeconfig', cluster.adminKubeconfig, '--json']);
    expect(after.code, after.stderr).toBe(0);
    expect(parse(after.stdout)).toMatchObject({ status: 'ok', findings: [] });
  });
});
