import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachLauncher, type Launcher } from './launchers.js';
import { startCli } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import { eventually, identityData, type KubeFixture, kubeFixture, NAMESPACE, newIdentity } from './watch-fixture.js';

// `watch --pidfile` as an attacker meets it (issue 24, "Signals to strangers"): the tool runs as root,
// and a pidfile someone else can write, or that names someone else's process, must never make it signal.
// The BUILT binary, real signals.

const NOBODY = 65534;
const isRoot = process.geteuid?.() === 0;
const asRoot = isRoot ? it : it.skip;
const rootOnly = isRoot ? '' : ' [SKIPPED: needs root to chown to uid 65534 and run a process as it]';

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
  for (const child of started.splice(0)) child.kill('SIGKILL');
  await kube.close();
  await rm(dir, { recursive: true, force: true });
});

/** A runner that logs every SIGHUP; "start" is logged once its handler is in place. */
async function runner(options: { uid?: number } = {}): Promise<{ child: ChildProcess; log: () => Promise<string[]> }> {
  const script = "process.on('SIGHUP', () => console.log('hup')); console.log('start'); setInterval(() => {}, 1000);";
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'], ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }) });
  started.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const log = async () => out.split('\n').filter(Boolean);
  await eventually(async () => expect(await log()).toEqual(['start']), 10_000);
  return { child, log };
}

/** Starts watch with the pidfile, rotates once, and returns the JSON lines once the signal step reported. */
async function rotateWith(pidfile: string, launcher: Launcher): Promise<Array<Record<string, unknown>>> {
  kube.create(identityData(newIdentity()));
  const run = startCli(['watch', '-c', dir, '--kubeconfig', kubeconfig, '--output', join(dir, 'identity.json'), '--pidfile', pidfile, '--signal-name', 'HUP', '--json'], {
    env: { PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1' },
    ...launcher.options,
  });
  started.push(run.child);
  const lines = () =>
    run
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  await eventually(() => expect(lines().map((l) => l.event)).toContain('written'), 10_000);
  kube.update(identityData(newIdentity()));
  await eventually(() => expect(lines().some((l) => l.event === 'signalled' || l.event === 'apply-error')).toBe(true), 10_000);
  return lines();
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
