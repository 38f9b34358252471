import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { agreeingAgent } from '../e2e/cluster-fixture.js';
import { type AgentWorld, agentWorld, SECRET } from './agent-world.js';
import { CLUSTER_KIND, startTestCluster, type TestCluster } from './test-cluster.js';

// Where the identity goes (issue 23, docs/protocol.md §6c), run off-cluster as an operator would:
// no service-account file, the admin kubeconfig. The agent reads its Secret in kube_resources_namespace,
// else its own Pod's namespace, and its cluster id in its own Pod's namespace: never a guess.

let cluster: TestCluster;
let w: AgentWorld;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.close();
});
beforeEach(async () => {
  // These tests are about finding the cluster agent cluster-wide: none another file left on the shared
  // real cluster may be found (the emulator is this file's own).
  for (const label of ['app.kubernetes.io/component=cluster-agent', 'agent.datadoghq.com/component=cluster-agent']) {
    await cluster.kubectl(['delete', 'deployments', '--all-namespaces', '-l', label, '--wait=false']);
  }
  w = await agentWorld(cluster, 'ns');
});
afterEach(async () => {
  // A cluster-agent Deployment left behind would be found by the next test's cluster-wide look.
  await cluster.kubectl(['delete', 'deployments', '--all', '-n', w.ns, '--wait=false']);
  await w.close();
});

/** Off-cluster: no service-account namespace file. */
const offCluster = () => ({ env: { PAR_IDENTITY_SA_ROOT: join(w.dir, 'no-pod') } });

describe(`the agent's namespace, off-cluster, on the ${CLUSTER_KIND} cluster`, () => {
  it('-n default (an existing namespace without the cluster agent) refuses to create: nothing enrolled, nothing created', async () => {
    const run = await w.rotate(['-n', 'default', '--no-verify'], offCluster());
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[SECRET_CREATE_UNCERTAIN]');
    expect(run.stderr).toContain('cluster-agent Deployments');
    expect(run.stderr).toContain(`identity Secrets named ${SECRET}`);
    expect(w.enrollCalls()).toBe(0);
    expect(await cluster.getJson('secret', SECRET, 'default')).toBeUndefined();
  });

  it('no -n and no kube_resources_namespace: refuses (the context namespace is never taken), nothing enrolled', async () => {
    const run = await w.rotate(['--no-verify'], offCluster());
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[NAMESPACE_UNKNOWN]');
    expect(w.enrollCalls()).toBe(0);
  });

  it('a cluster agent found by its Operator labels makes the namespace certain: created there, cluster id beside it, undo deletes', async () => {
    for (const object of agreeingAgent(w.ns, w.enrollment.url, {
      name: 'datadog-cluster-agent',
      labels: { 'agent.datadoghq.com/component': 'cluster-agent', 'app.kubernetes.io/managed-by': 'datadog-operator' },
    }))
      await cluster.create(object);
    const run = await w.rotate(['-n', w.ns, '--no-verify', '--json'], offCluster());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`cluster agent: deployment ${w.ns}/datadog-cluster-agent (found by its labels`);
    expect(w.enrollCalls()).toBe(1);
    const data = await w.secretData();
    const kubeSystemUid = (await cluster.getJson('namespace', 'kube-system'))!.metadata.uid;
    expect(data.orch_cluster_id).toBe(kubeSystemUid);
    expect((await cluster.getJson('configmap', 'datadog-cluster-id', w.ns))!.data).toEqual({ id: kubeSystemUid });
    expect(await cluster.getJson('configmap', 'datadog-cluster-id', 'default')).toBeUndefined();
    const out = JSON.parse(run.stdout) as { action: string; rollbackCommand: string };
    expect(out.action).toBe('created');
    expect(out.rollbackCommand).toContain(`delete secret ${SECRET}`);
    expect(out.rollbackCommand).not.toContain('rollback');
  });

  it('--create confirms a namespace without a cluster agent; the cluster id then lives beside the Secret', async () => {
    const run = await w.rotate(['-n', w.ns, '--create', '--no-verify'], offCluster());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('--create, though no cluster-agent Deployment was found');
    expect(run.stdout).toMatch(/undo: kubectl -n \S+ .*delete secret/);
    expect(await cluster.getJson('configmap', 'datadog-cluster-id', w.ns)).toBeDefined();
  });

  it('status reads where the cluster agent runs (found by its Helm labels), without -n; it never refuses to read', async () => {
    for (const object of agreeingAgent(w.ns, w.enrollment.url)) await cluster.create(object);
    expect((await w.rotate(['-n', w.ns, '--no-verify'], offCluster())).code).toBe(0);
    const status = await w.run(['status', '--secret', '-c', w.dir, '--kubeconfig', cluster.adminKubeconfig, '--json'], offCluster());
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ namespace: w.ns });
    expect(status.stderr).toContain('found by its labels');
  });

  it('-n that differs from kube_resources_namespace: refused, naming both (the agent reads only the latter), nothing enrolled, nothing created', async () => {
    const run = await w.rotate(['-n', 'default', '--no-verify', '--json'], {
      env: { ...offCluster().env, DD_KUBE_RESOURCES_NAMESPACE: w.ns },
    });
    expect(run.code, run.stderr).toBe(3);
    const out = JSON.parse(run.stdout) as { code: string; message: string };
    expect(out.code).toBe('NAMESPACE_MISMATCH');
    expect(out.message).toContain('-n default differs from kube_resources_namespace');
    expect(out.message).toContain(`= ${w.ns}`);
    expect(w.enrollCalls()).toBe(0);
    expect(await cluster.getJson('secret', SECRET, 'default')).toBeUndefined();
    expect(await cluster.getJson('secret', SECRET, w.ns)).toBeUndefined();
  });

  it("an id in the agent's datadog-cluster-id that is not 36 bytes is replaced with the kube-system UID, as the agent does; other keys kept", async () => {
    for (const object of agreeingAgent(w.ns, w.enrollment.url)) await cluster.create(object);
    await cluster.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'datadog-cluster-id', namespace: w.ns },
      data: { id: 'cluster-1234', other: 'kept' },
    });
    const run = await w.rotate(['-n', w.ns, '--no-verify'], offCluster());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('not 36 bytes');
    const kubeSystemUid = (await cluster.getJson('namespace', 'kube-system'))!.metadata.uid;
    expect((await w.secretData()).orch_cluster_id).toBe(kubeSystemUid);
    expect((await cluster.getJson('configmap', 'datadog-cluster-id', w.ns))!.data).toEqual({ id: kubeSystemUid, other: 'kept' });
  });
});
