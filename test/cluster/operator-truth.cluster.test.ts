import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decodeIdentity } from '../../src/identity/index.js';
import { type AgentWorld, agentWorld, SECRET } from './agent-world.js';
import { startCuttingProxy } from './cutting-proxy.js';
import { CLUSTER_KIND, startTestCluster, type TestCluster } from './test-cluster.js';

// Issue 23's Kubernetes points, on the cluster of this run (emulator or real control plane): a hung
// apiserver within --timeout, a missing workload, and the Helm chart's placeholder never kept as the
// previous identity. Every assertion reads the cluster through kubectl.

let cluster: TestCluster;
let w: AgentWorld;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.close();
});
beforeEach(async () => {
  w = await agentWorld(cluster, 'truth');
});
afterEach(async () => {
  await w.close();
});

describe(`operator truth on the ${CLUSTER_KIND} cluster`, () => {
  // Not timed by the wall clock: the request that hangs reports the time it was given, which must be
  // what was left of --timeout ("command deadline"), not its own 30 s. The old code waited 30 s, past
  // the 25 s guard of the run, so the exit code alone tells the two apart.
  it('rotate-par-identity --timeout 5s through an apiserver that stops answering: KUBE_TIMEOUT within the command deadline, nothing enrolled', async () => {
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const sa = await cluster.serviceAccountKubeconfig(w.ns, 'agent', [
      { apiGroups: [''], resources: ['secrets'], resourceNames: [SECRET], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['datadog-cluster-id'], verbs: ['get'] },
    ]);
    const proxy = await startCuttingProxy(sa);
    try {
      const viaProxy = join(w.dir, 'hung.kubeconfig');
      await writeFile(viaProxy, await proxy.kubeconfigFrom(sa), { mode: 0o600 });
      const hang = proxy.stall((method, path) => method === 'GET' && path.includes(`/secrets/${SECRET}`));
      const before = (await cluster.getJson('secret', SECRET, w.ns))!.metadata.resourceVersion;
      const calls = w.enrollCalls();
      const run = await w.rotate(['--no-verify', '--timeout', '5s', '--json'], { kubeconfig: viaProxy, timeoutMs: 25_000 });
      expect(run.code, run.stderr).toBe(9);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: 'error', code: 'KUBE_TIMEOUT', exitCode: 9 });
      expect(run.stdout).toMatch(/no answer from the Kubernetes API within [0-4](\.\d)? s \(command deadline\)/);
      expect(hang.hits).toBeGreaterThanOrEqual(1);
      expect(w.enrollCalls()).toBe(calls);
      expect((await cluster.getJson('secret', SECRET, w.ns))!.metadata.resourceVersion).toBe(before);
    } finally {
      await proxy.close();
    }
  });

  it('rollout of a workload that does not exist: WORKLOAD_MISSING, exit 10, in text and --json', async () => {
    for (const json of [false, true]) {
      const run = await w.run([
        'rollout',
        'deployment/nope',
        '-n',
        w.ns,
        '--kubeconfig',
        cluster.adminKubeconfig,
        ...(json ? ['--json'] : []),
      ]);
      expect(run.code, run.stderr).toBe(10);
      expect(run.stderr).toContain('error[WORKLOAD_MISSING]');
      if (json) expect(JSON.parse(run.stdout)).toMatchObject({ status: 'error', code: 'WORKLOAD_MISSING', exitCode: 10 });
    }
  });

  it("the Helm chart's placeholder is replaced and never kept as the previous identity: rollback then refuses (NO_BACKUP)", async () => {
    const placeholder = { RUNNER_URN: 'URN_FROM_CONFIG', RUNNER_PRIVATE_KEY: 'PRIVATE_KEY_FROM_CONFIG' };
    await cluster.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'par-runner', namespace: w.ns },
      type: 'Opaque',
      stringData: placeholder,
    });
    const args = [
      '-c',
      join(w.dir, 'datadog-cluster.yaml'),
      '--k8s-secret',
      'par-runner',
      '-n',
      w.ns,
      '--kubeconfig',
      cluster.adminKubeconfig,
    ];
    const run = await w.run(['rotate-identity', ...args]);
    expect(run.code, run.stderr).toBe(0);
    const data = await w.secretData('par-runner');
    decodeIdentity({ privateKey: data.RUNNER_PRIVATE_KEY!, urn: data.RUNNER_URN! });
    expect(data.PREVIOUS_RUNNER_URN).toBeUndefined();
    expect(data.PREVIOUS_RUNNER_PRIVATE_KEY).toBeUndefined();
    const back = await w.run(['rollback', ...args]);
    expect(back.code, back.stderr).toBe(7);
    expect(back.stderr).toContain('error[NO_BACKUP]');
    expect((await w.secretData('par-runner')).RUNNER_URN).toBe(data.RUNNER_URN);
  });
});
