import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { NOBODY, ROOT } from './attacker.js';
import { describeEachLauncher, type Launcher } from './launchers.js';
import { CAN_CHOOSE_PID, NEXT_PID_MISSING, spawnAtPid } from './next-pid.js';
import { type RunningCli, startCli } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import {
  BINARY_WAIT_MS,
  eventually,
  identityData,
  type KubeFixture,
  kubeFixture,
  NAMESPACE,
  newIdentity,
  stopProcesses,
} from './watch-fixture.js';

// `watch --pidfile` as an attacker meets it (issue 24, "Signals to strangers"): the tool runs as root,
// and a pidfile someone else can write, or that names someone else's process, must never make it signal.
// Both launchers, real signals.

const choosePidMissing = !ROOT ? '' : NEXT_PID_MISSING;
const asRoot = ROOT ? it : it.skip;
const rootOnly = ROOT ? '' : ' [SKIPPED: needs root to chown to uid 65534 and run a process as it]';

// Each test starts the binary and a runner and waits for several things in turn: on a loaded 2-core
// machine each wait may take many seconds, so the test's own limit is well above their sum (and no
// wait outlives its test: see eventually).
vi.setConfig({ testTimeout: 4 * BINARY_WAIT_MS, hookTimeout: BINARY_WAIT_MS });

const started: Array<ChildProcess | ChildProcessWithoutNullStreams> = [];
let kube: KubeFixture;
let dir: string;
let kubeconfig: string;

beforeEach(async () => {
  kube = await kubeFixture();
  dir = await mkdtemp(join(tmpdir(), 'par-hostile-pid-'));
  await writeFile(join(dir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
  kubeconfig = join(dir, 'kubeconfig');
  await kube.emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
});
afterEach(async () => {
  await stopProcesses(started);
  await kube.close();
  await rm(dir, { recursive: true, force: true });
});

/** A runner that logs every SIGHUP; "start" is logged once its handler is in place. With `pid`, it gets that pid. */
async function runner(options: { uid?: number; pid?: number } = {}): Promise<{ child: ChildProcess; log: () => Promise<string[]> }> {
  const script = "process.on('SIGHUP', () => console.log('hup')); console.log('start'); setInterval(() => {}, 1000);";
  const start = () =>
    spawn(process.execPath, ['-e', script], {
      stdio: ['ignore', 'pipe', 'ignore'],
      ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
    });
  const child = options.pid === undefined ? start() : spawnAtPid(options.pid, start);
  started.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const log = async () => out.split('\n').filter(Boolean);
  await eventually(async () => expect(await log()).toEqual(['start']), BINARY_WAIT_MS);
  return { child, log };
}

/** Starts watch with the pidfile and waits for its first write; `update()` then changes the identity, which it signals. */
async function watchWith(
  pidfile: string,
  launcher: Launcher,
  env: Record<string, string> = {},
): Promise<{ run: RunningCli; lines: () => Array<Record<string, unknown>>; update: () => void }> {
  kube.create(identityData(newIdentity()));
  const run = startCli(
    [
      'watch',
      '-c',
      dir,
      '--kubeconfig',
      kubeconfig,
      '--output',
      join(dir, 'identity.json'),
      '--pidfile',
      pidfile,
      '--signal-name',
      'HUP',
      '--json',
    ],
    {
      env: { PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1', ...env },
      ...launcher.options,
    },
  );
  started.push(run.child);
  const lines = () =>
    run
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  await eventually(() => expect(lines().map((l) => l.event)).toContain('written'), BINARY_WAIT_MS);
  return { run, lines, update: () => kube.update(identityData(newIdentity())) };
}

/** Starts watch with the pidfile, rotates once, and returns the JSON lines once the signal step reported. */
async function rotateWith(pidfile: string, launcher: Launcher): Promise<Array<Record<string, unknown>>> {
  const { lines, update } = await watchWith(pidfile, launcher);
  update();
  await eventually(() => expect(lines().some((l) => l.event === 'signalled' || l.event === 'apply-error')).toBe(true), BINARY_WAIT_MS);
  return lines();
}

/** Whether a process is stopped (SIGSTOP, as the failpoint stops it): state T in /proc/<pid>/stat. */
function stopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
}

describeEachLauncher('watch --pidfile refuses to signal on a stranger’s word', (launcher) => {
  it('a safe pidfile (ours, 0644) naming our own process: signalled (the control for the refusals below)', async () => {
    const { child, log } = await runner();
    const pidfile = join(dir, 'runner.pid');
    await writeFile(pidfile, `${child.pid}\n`);
    await chmod(pidfile, 0o644);
    const lines = await rotateWith(pidfile, launcher);
    expect(lines.find((l) => l.event === 'signalled')).toMatchObject({ pid: child.pid, signal: 'SIGHUP' });
    await eventually(async () => expect(await log()).toEqual(['start', 'hup']));
  });

  it('a pidfile writable by others (0666): PIDFILE_UNSAFE naming the mode, nobody signalled', async () => {
    const { child, log } = await runner();
    const pidfile = join(dir, 'runner.pid');
    await writeFile(pidfile, `${child.pid}\n`);
    await chmod(pidfile, 0o666);
    const lines = await rotateWith(pidfile, launcher);
    expect(lines.some((l) => l.event === 'signalled')).toBe(false);
    const error = lines.find((l) => l.event === 'apply-error')?.error as { code: string; message: string };
    expect(error.code).toBe('PIDFILE_UNSAFE');
    expect(error.message).toContain('writable by its group and others (mode 0666)');
    expect(await log()).toEqual(['start']);
  });

  asRoot(`a pidfile owned by uid ${NOBODY}: PIDFILE_UNSAFE naming the owner, nobody signalled${rootOnly}`, async () => {
    const { child, log } = await runner();
    const pidfile = join(dir, 'runner.pid');
    await writeFile(pidfile, `${child.pid}\n`);
    await chmod(pidfile, 0o644);
    await chown(pidfile, NOBODY, NOBODY);
    const lines = await rotateWith(pidfile, launcher);
    expect(lines.some((l) => l.event === 'signalled')).toBe(false);
    const error = lines.find((l) => l.event === 'apply-error')?.error as { code: string; message: string };
    expect(error.code).toBe('PIDFILE_UNSAFE');
    expect(error.message).toContain(`owned by uid ${NOBODY}`);
    expect(await log()).toEqual(['start']);
  });

  it.runIf(ROOT && CAN_CHOOSE_PID)(
    `the runner exits between the check and the signal, and uid ${NOBODY} gets its pid: the process is held by its /proc directory, the change is seen before kill(2), nobody signalled${rootOnly}${choosePidMissing}`,
    async () => {
      const first = await runner();
      const pid = first.child.pid!;
      const pidfile = join(dir, 'runner.pid');
      await writeFile(pidfile, `${pid}\n`);
      await chmod(pidfile, 0o644);
      const { run, lines, update } = await watchWith(pidfile, launcher, { PAR_IDENTITY_FAILPOINT: 'signal-after-check:stop' });
      update();
      // Stopped after the pidfile and the process were checked (ours, our uid), before the signal.
      await eventually(() => expect(stopped(run.child.pid!)).toBe(true), BINARY_WAIT_MS);
      first.child.kill('SIGKILL');
      await once(first.child, 'exit');
      const stranger = await runner({ uid: NOBODY, pid });
      expect(stranger.child.pid).toBe(pid);
      process.kill(run.child.pid!, 'SIGCONT');
      await eventually(() => expect(lines().some((l) => l.event === 'apply-error' || l.event === 'signalled')).toBe(true), BINARY_WAIT_MS);
      // Signalled by pid number alone, the stranger's process would get the SIGHUP here.
      expect(lines().find((l) => l.event === 'signalled')).toBeUndefined();
      const error = lines().find((l) => l.event === 'apply-error')?.error as { code: string; message: string };
      expect(error.code).toBe('SIGNAL_FAILED');
      expect(error.message).toContain(`cannot send SIGHUP to process ${pid}: it exited after it was checked`);
      // The retry reads the pidfile again and finds the stranger's process: refused as another user's.
      await eventually(
        () => expect(lines().some((l) => (l.error as { code?: string } | undefined)?.code === 'SIGNAL_FOREIGN')).toBe(true),
        BINARY_WAIT_MS,
      );
      expect(await stranger.log()).toEqual(['start']);
    },
    4 * BINARY_WAIT_MS,
  );

  asRoot(`a safe pidfile naming a process of uid ${NOBODY}: SIGNAL_FOREIGN, that process not signalled${rootOnly}`, async () => {
    const { child, log } = await runner({ uid: NOBODY });
    const pidfile = join(dir, 'runner.pid');
    await writeFile(pidfile, `${child.pid}\n`);
    await chmod(pidfile, 0o644);
    const lines = await rotateWith(pidfile, launcher);
    expect(lines.some((l) => l.event === 'signalled')).toBe(false);
    const error = lines.find((l) => l.event === 'apply-error')?.error as { code: string; message: string };
    expect(error.code).toBe('SIGNAL_FOREIGN');
    expect(error.message).toContain(`runs as uid ${NOBODY}`);
    expect(await log()).toEqual(['start']);
    expect(await readFile(pidfile, 'utf8')).toBe(`${child.pid}\n`);
  });
});
