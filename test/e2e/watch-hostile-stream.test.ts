import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runCli } from './run-cli.js';
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
import { HOSTILE_STREAM_CASES, runHostileStreamCase, startJsonWatch, type WatchingCli } from './watch-hostile-scenario.js';

// Sized for a loaded 2-core machine: each wait for the binary is generous, the test limit above their sum.
vi.setConfig({ testTimeout: 4 * BINARY_WAIT_MS, hookTimeout: BINARY_WAIT_MS });

// `par-identity watch` (the BUILT binary) against an apiserver that sends what it should not
// (the scenario and its invariants are in watch-hostile-scenario.ts, shared with the fault matrix),
// and the checks of its output path and readiness.

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
  await stopProcesses(running);
  await kube.close();
  await rm(dir, { recursive: true, force: true });
});

async function startWatch(output: string, extra: string[] = []): Promise<WatchingCli> {
  const run = await startJsonWatch(dir, kubeconfig, output, extra);
  running.push(run.child);
  return run;
}

describe('watch survives a hostile watch stream', () => {
  it.each(HOSTILE_STREAM_CASES)('$kind: identity kept, counted, watch restarted or event ignored, next rotation applied', async (kase) => {
    const report = await runHostileStreamCase(kase);
    expect(report.notes).toEqual([]);
    expect(report).toMatchObject({ counted: true, kept: true, recovered: true, stoppedCleanly: true, noKeyInOutput: true });
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
    await eventually(async () => expect(await readyz()).toBe(200), BINARY_WAIT_MS);
    // The process to signal is gone: handing the next identity on fails.
    await writeFile(pidfile, 'not-a-pid\n');
    kube.update(identityData(newIdentity()));
    await eventually(() => expect(run.lines().some((l) => l.event === 'apply-error')).toBe(true), BINARY_WAIT_MS);
    expect(await readyz()).toBe(503);
    await writeFile(pidfile, `${process.pid}\n`);
    await eventually(async () => expect(await readyz()).toBe(200), BINARY_WAIT_MS);
    run.child.kill('SIGTERM');
    expect(await run.exit, run.stderr()).toEqual({ code: 0, signal: null });
  });
});
