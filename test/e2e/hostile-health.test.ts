import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { describeEachLauncher } from './launchers.js';
import { type RunningCli, startCli } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import {
  BINARY_WAIT_MS,
  eventually,
  stopProcesses,
  identityData,
  type KubeFixture,
  kubeFixture,
  NAMESPACE,
  newIdentity,
} from './watch-fixture.js';

// Sized for a loaded 2-core machine: each wait for the binary is generous, the test limit above their sum.
vi.setConfig({ testTimeout: 4 * BINARY_WAIT_MS, hookTimeout: BINARY_WAIT_MS });

// `watch --listen` as any local user meets it (issue 24, "the health endpoints are read-only"): every
// method but GET and HEAD is refused with 405 on every path, whatever its body, and changes nothing —
// not the identity written, not the watch; no answer holds key material.

let kube: KubeFixture;
let dir: string;
let run: RunningCli | undefined;
beforeEach(async () => {
  kube = await kubeFixture();
  dir = await mkdtemp(join(tmpdir(), 'par-hostile-health-'));
  await writeFile(join(dir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
  await kube.emu.writeKubeconfig(join(dir, 'kubeconfig'), { namespace: NAMESPACE });
});
afterEach(async () => {
  if (run) await stopProcesses([run.child]);
  run = undefined;
  await kube.close();
  await rm(dir, { recursive: true, force: true });
});

describeEachLauncher('the watch health endpoints are read-only', (launcher) => {
  it('POST, PUT, PATCH and DELETE on every path: 405, the identity file and the watch unchanged; GET and HEAD answer without key material', async () => {
    const identity = newIdentity();
    kube.create(identityData(identity));
    const output = join(dir, 'identity.json');
    run = startCli(['watch', '-c', dir, '--kubeconfig', join(dir, 'kubeconfig'), '--output', output, '--listen', '127.0.0.1:0', '--json'], {
      env: { PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1' },
      ...launcher.options,
    });
    const lines = () =>
      run!
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await eventually(() => expect(lines().map((l) => l.event)).toContain('written'), BINARY_WAIT_MS);
    const address = lines().find((l) => l.event === 'listening')!.address as string;
    const before = await stat(output);
    const content = await readFile(output, 'utf8');

    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const path of ['/healthz', '/readyz', '/metrics', '/', '/output']) {
        const res = await fetch(`http://${address}${path}`, { method, body: JSON.stringify({ private_key: 'x', urn: 'y' }) });
        expect([method, path, res.status]).toEqual([method, path, 405]);
        await res.body?.cancel();
      }
    }
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const res = await fetch(`http://${address}${path}`);
      expect(res.status).toBe(200);
      expect(await res.text()).not.toContain(identity.privateKey);
      expect((await fetch(`http://${address}${path}`, { method: 'HEAD' })).status).toBe(200);
    }
    const after = await stat(output);
    expect([after.ino, after.mtimeMs, await readFile(output, 'utf8')]).toEqual([before.ino, before.mtimeMs, content]);
    expect(lines().filter((l) => l.event === 'written')).toHaveLength(1);
    expect(run.child.exitCode).toBeNull();
  });
});
