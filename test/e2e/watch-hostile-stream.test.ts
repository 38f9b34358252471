import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningCli, runCli, startCli } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import { eventually, identityData, type KubeFixture, kubeFixture, NAMESPACE, newIdentity, SECRET } from './watch-fixture.js';

// `par-identity watch` (the BUILT binary) against an apiserver that sends what it should not.
// Whatever arrives, the current identity stays, the event is counted, the watch restarts with
// backoff, and the next valid rotation is still applied.

const running: ChildProcessWithoutNullStreams[] = [];
let kube: KubeFixture;
let dir: string;
let kubeconfig: string;

beforeEach(async () => {
  kube = await kubeFixture();
  dir = await mkdtemp(join(tmpdir(), 'par-watch-hostile-'));
  await writeFile(join(dir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
  kubeconfig = join(dir, 'kubeconfig');
  await kube.emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
});
afterEach(async () => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
  await kube.close();
  await rm(dir, { recursive: true, force: true });
});

interface Watching extends RunningCli {
  address: string;
  lines(): Array<Record<string, unknown>>;
  metrics(): Promise<string>;
}

async function startWatch(output: string, extra: string[] = []): Promise<Watching> {
  const run = startCli(['watch', '-c', dir, '--kubeconfig', kubeconfig, '--output', output, '--listen', '127.0.0.1:0', '--json', ...extra], { env: { PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1' } });
  running.push(run.child);
  const lines = () =>
    run
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const address = await eventually(() => {
    const l = lines().find((e) => e.event === 'listening');
    expect(l, run.stderr()).toBeDefined();
    return l!.address as string;
  }, 10_000);
  return { ...run, lines, address, metrics: async () => (await fetch(`http://${address}/metrics`)).text() };
}

const counter = (text: string, name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);

const otherSecret = (type: string) => ({ type, object: { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'someone-else', namespace: NAMESPACE, resourceVersion: '999999' }, data: identityData(newIdentity()) } });

const CASES: Array<{ kind: string; lines: Array<string | object>; code?: string; ignored?: boolean }> = [
  { kind: 'a line that is not JSON', lines: ['this is not json {'], code: 'WATCH_MALFORMED' },
  { kind: 'an event of an unknown type', lines: [{ type: 'EXPLODED', object: { kind: 'Secret', metadata: { name: SECRET, resourceVersion: '5' } } }], code: 'WATCH_MALFORMED' },
  { kind: 'an event of another kind', lines: [{ type: 'MODIFIED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: SECRET, namespace: NAMESPACE, resourceVersion: '999999' }, data: {} } }], code: 'WATCH_MALFORMED' },
  { kind: 'an event without an object', lines: [{ type: 'ADDED' }], code: 'WATCH_MALFORMED' },
  { kind: 'an event without metadata', lines: [{ type: 'MODIFIED', object: { kind: 'Secret', data: {} } }], code: 'WATCH_MALFORMED' },
  { kind: 'an ERROR event without an object', lines: [{ type: 'ERROR' }], code: 'WATCH_MALFORMED' },
  { kind: 'an ERROR event other than 410', lines: [{ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'etcd \u001b[31mexploded\u001b[0m' } }], code: 'KUBE_API_ERROR' },
  { kind: 'an event for another Secret', lines: [otherSecret('ADDED'), otherSecret('MODIFIED')], ignored: true },
];

describe('watch survives a hostile watch stream', () => {
  it.each(CASES)('$kind: identity kept, counted, watch restarted or event ignored, next rotation applied', async ({ lines, code, ignored }) => {
    const first = newIdentity();
    kube.create(identityData(first));
    const output = join(dir, 'identity.json');
    const run = await startWatch(output);
    await eventually(() => expect(run.lines().filter((l) => l.event === 'written')).toHaveLength(1), 10_000);
    await eventually(() => expect(kube.emu.openWatches).toBe(1), 10_000);

    expect(kube.emu.faults.injectWatchLines(...lines)).toBe(1);
    if (ignored) {
      await eventually(() => expect(run.lines().filter((l) => l.event === 'ignored')).toHaveLength(2), 10_000);
      expect(counter(await run.metrics(), 'par_watch_ignored_events_total')).toBe(2);
    } else {
      const error = await eventually(() => {
        const e = run.lines().find((l) => l.event === 'watch-error');
        expect(e).toBeDefined();
        return e!.error as { code: string; message: string; hint: string };
      }, 10_000);
      expect(error.code).toBe(code);
      expect(error.hint).toContain('The current identity is kept');
      expect(error.message).not.toContain('\u001b');
      const metrics = await run.metrics();
      expect(counter(metrics, 'par_watch_restarts_total')).toBeGreaterThanOrEqual(1);
      if (code === 'WATCH_MALFORMED') expect(counter(metrics, 'par_watch_malformed_events_total')).toBeGreaterThanOrEqual(1);
    }
    // Nothing was applied from the bad stream.
    expect(JSON.parse(await readFile(output, 'utf8')).urn).toBe(first.urn);
    expect(run.lines().filter((l) => l.event === 'loaded')).toHaveLength(1);

    // The watch came back: a real rotation is applied.
    const second = newIdentity();
    kube.update(identityData(second));
    await eventually(() => expect(run.lines().filter((l) => l.event === 'written')).toHaveLength(2), 15_000);
    expect(JSON.parse(await readFile(output, 'utf8')).urn).toBe(second.urn);
    run.child.kill('SIGTERM');
    expect(await run.exit, run.stderr()).toEqual({ code: 0, signal: null });
    expect(run.stderr()).not.toMatch(/Unhandled|TypeError/);
  });
});

describe('watch --output', () => {
  it('an output directory that cannot be written is refused at start, before anything is watched', async () => {
    kube.create(identityData(newIdentity()));
    const ro = join(dir, 'ro');
    await mkdir(ro);
    await chmod(ro, 0o500);
    // As root, a 0500 directory is still writable: use a path under a file instead, which nobody can create.
    const notADir = join(dir, 'datadog-cluster.yaml', 'identity.json');
    for (const output of [notADir, ...(process.getuid?.() === 0 ? [] : [join(ro, 'identity.json')])]) {
      const run = await runCli(['watch', '-c', dir, '--kubeconfig', kubeconfig, '--output', output], { env: { NO_COLOR: '1' } });
      expect(run.code, run.stderr).toBe(7);
      expect(run.stderr).toMatch(/error\[DIRECTORY_(MISSING|NOT_WRITABLE)\]: --output /);
      expect(run.stderr).toContain('Nothing is watched.');
    }
    expect(kube.requests('watch')).toHaveLength(0);
    expect(kube.requests('list')).toHaveLength(0);
  });
});

describe('watch /readyz', () => {
  it('turns false while the last apply failed, true again once one succeeds', async () => {
    const first = newIdentity();
    kube.create(identityData(first));
    const pidfile = join(dir, 'runner.pid');
    await writeFile(pidfile, `${process.pid}\n`);
    const run = await startWatch(join(dir, 'identity.json'), ['--pidfile', pidfile, '--signal-name', 'SIGWINCH']);
    const readyz = async () => (await fetch(`http://${run.address}/readyz`)).status;
    await eventually(async () => expect(await readyz()).toBe(200), 10_000);
    // The process to signal is gone: handing the next identity on fails.
    await writeFile(pidfile, 'not-a-pid\n');
    kube.update(identityData(newIdentity()));
    await eventually(() => expect(run.lines().some((l) => l.event === 'apply-error')).toBe(true), 10_000);
    expect(await readyz()).toBe(503);
    await writeFile(pidfile, `${process.pid}\n`);
    await eventually(async () => expect(await readyz()).toBe(200), 15_000);
    run.child.kill('SIGTERM');
    expect(await run.exit, run.stderr()).toEqual({ code: 0, signal: null });
  });
});
