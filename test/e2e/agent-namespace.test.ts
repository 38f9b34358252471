import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ClusterFixture, clusterFixture, NS, SECRET } from './cluster-fixture.js';

// Where the identity goes, off-cluster (issue 23, docs/protocol.md §6c): a Secret written where the
// agent does not read it is a runner enrolled for nothing, with an undo that cannot work. The fixture
// runs the cluster agent as the Helm chart deploys it, in namespace NS, and its kubeconfig context
// names NS too: the context must never be what places the Secret.

let fx: ClusterFixture;
beforeEach(async () => {
  fx = await clusterFixture();
  // No kube_resources_namespace: only -n, the Pod or the labels can say where the agent is.
  await fx.writeConfig('cluster_name: e2e-cluster');
});
afterEach(async () => {
  await fx.close();
});

const enrollCalls = () => fx.enrollment.requests.filter((r) => r.route === 'enroll').length;
/** Off-cluster, whatever the machine running the tests has. */
const offCluster = () => ({ env: { PAR_IDENTITY_SA_ROOT: join(fx.dir, 'no-pod') } });
const configMaps = () => fx.kube.listObjects('v1', 'ConfigMap').filter((c) => c.metadata.name === 'datadog-cluster-id');

describe('the identity Secret goes only where the agent reads it', () => {
  it('-n default (exists, no cluster agent there): refused before enrolling, naming where the agent was found', async () => {
    const run = await fx.rotate(['-n', 'default', '--no-verify', '--json'], offCluster());
    expect(run.code, run.stderr).toBe(9);
    const out = JSON.parse(run.stdout) as { code: string; message: string; hint: string };
    expect(out.code).toBe('SECRET_CREATE_UNCERTAIN');
    expect(out.message).toContain(`cluster-agent Deployments: ${NS}/dd-release-cluster-agent`);
    expect(out.message).toContain(`identity Secrets named ${SECRET}: none found`);
    expect(out.hint).toContain('--create');
    expect(enrollCalls()).toBe(0);
    expect(fx.secret(SECRET, 'default')).toBeUndefined();
    expect(configMaps()).toEqual([]);
  });

  it('--create confirms it: created, and the undo deletes the created Secret (no rollback: there is nothing to restore)', async () => {
    const run = await fx.rotate(['-n', 'default', '--create', '--no-verify', '--json'], offCluster());
    expect(run.code, run.stderr).toBe(0);
    expect(enrollCalls()).toBe(1);
    expect(fx.secretData(SECRET, 'default').urn).toBeTruthy();
    const out = JSON.parse(run.stdout) as { action: string; rollbackCommand: string; previousUrn: string | null };
    expect(out).toMatchObject({ action: 'created', previousUrn: null });
    expect(out.rollbackCommand).toBe(`kubectl -n default --kubeconfig ${fx.adminKubeconfig} delete secret ${SECRET}`);
    // The cluster id is the one the cluster agent reads, in its own namespace; none made in default.
    expect(configMaps().map((c) => c.metadata.namespace)).toEqual([NS]);
    const human = await fx.rotate(['-n', 'default', '--create', '--no-verify'], offCluster());
    expect(human.code, human.stderr).toBe(0);
    // The second run updated what the first created: its undo is a rollback again.
    expect(human.stdout).toMatch(/undo: \S+ rollback --secret/);
  });

  it('a namespace where the cluster agent runs (Helm labels) is certain: created, next: restarts that Deployment, undo: deletes', async () => {
    const run = await fx.rotate(['-n', NS, '--no-verify'], offCluster());
    expect(run.code, run.stderr).toBe(0);
    // The agent's own settings say where it reads (its DD_KUBE_RESOURCES_NAMESPACE, its Pod's namespace).
    expect(run.stderr).toContain(`it will be created (namespace from --namespace)`);
    expect(run.stderr).toContain(`cluster agent: deployment ${NS}/dd-release-cluster-agent`);
    expect(run.stdout).toMatch(new RegExp(`next: .*rollout deployment/dd-release-cluster-agent -n ${NS}`));
    expect(run.stdout).toContain(
      `undo: kubectl -n ${NS} --kubeconfig ${fx.adminKubeconfig} delete secret ${SECRET} (it was created by this run`,
    );
    expect(run.stdout).not.toMatch(/undo: \S+ rollback/);
    expect(fx.secret(SECRET, NS)).toBeDefined();
  });

  it("DD_KUBE_RESOURCES_NAMESPACE in this shell other than the agent's: refused, unless overridden; then created there without -n", async () => {
    const env = { ...offCluster().env, DD_KUBE_RESOURCES_NAMESPACE: 'other' };
    const refused = await fx.rotate(['--no-verify'], { env });
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain('error[AGENT_SETTINGS_MISMATCH]');
    expect(refused.stderr).toContain(`identity Secret namespace: here other (env DD_KUBE_RESOURCES_NAMESPACE), the agent ${NS}`);
    const run = await fx.rotate(['--no-verify', '--override-agent-settings'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`secret: other/${SECRET} (namespace from kube_resources_namespace`);
    expect(fx.secret(SECRET, 'other')).toBeDefined();
  });

  it('-n that differs from kube_resources_namespace: refused, naming both, nothing enrolled', async () => {
    const run = await fx.rotate(['-n', 'default', '--no-verify', '--json'], {
      env: { ...offCluster().env, DD_KUBE_RESOURCES_NAMESPACE: NS },
    });
    expect(run.code, run.stderr).toBe(3);
    const out = JSON.parse(run.stdout) as { code: string; message: string };
    expect(out.code).toBe('NAMESPACE_MISMATCH');
    expect(out.message).toContain('-n default differs from kube_resources_namespace');
    expect(out.message).toContain(`= ${NS}`);
    expect(enrollCalls()).toBe(0);
    expect(fx.secret(SECRET, 'default')).toBeUndefined();
  });

  it("off-cluster with no -n: the agent's Deployment gives its namespace, never the context's", async () => {
    await fx.kube.writeKubeconfig(fx.adminKubeconfig, { token: fx.kube.adminToken, namespace: 'other' });
    const run = await fx.rotate(['--no-verify'], offCluster());
    expect(run.code, run.stderr).toBe(0);
    expect(fx.secret(SECRET, NS)).toBeDefined();
    expect(fx.secret(SECRET, 'other')).toBeUndefined();
  });

  it("off-cluster with no -n, no kube_resources_namespace, and the agent's Deployment unreadable: refused (never the context namespace), nothing enrolled", async () => {
    const listOnly = await fx.kubeconfigFor('list-only', [
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] },
      { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'list', 'create', 'update'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
    ]);
    const run = await fx.run(['rotate-par-identity', '-c', fx.dir, '--kubeconfig', listOnly, '--no-verify'], offCluster());
    expect(run.stderr).toContain(
      `cluster agent not found (deployment ${NS}/dd-release-cluster-agent (found by its labels); get deployment ${NS}/dd-release-cluster-agent: forbidden to this user)`,
    );
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[NAMESPACE_UNKNOWN]');
    expect(run.stderr).toContain('kubeconfig context');
    expect(run.stderr).toContain(`${NS}/dd-release-cluster-agent`);
    // The hint names the -n to pass (the one namespace where the agent was found), never a placeholder.
    expect(run.stderr).toContain(`Pass -n ${NS} (where the cluster-agent Deployment was found)`);
    expect(run.stderr).not.toMatch(/<[a-z][^>]*>/);
    expect(enrollCalls()).toBe(0);
    expect(fx.secret(SECRET, NS)).toBeUndefined();
    expect(configMaps()).toEqual([]);
  });

  it('a user who may not list Deployments or Secrets is told so, not given a wrong grant hint', async () => {
    const kubeconfig = await fx.kubeconfigFor(
      'namespaced',
      [
        { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'create', 'update'] },
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
      ],
      'default',
    );
    const run = await fx.run(
      ['rotate-par-identity', '-c', fx.dir, '--kubeconfig', kubeconfig, '-n', 'default', '--no-verify'],
      offCluster(),
    );
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[SECRET_CREATE_UNCERTAIN]');
    expect(run.stderr).toContain('listing Deployments in all namespaces is forbidden to this user');
    expect(run.stderr).toContain('listing Secrets in all namespaces is forbidden to this user');
    expect(run.stderr).not.toContain('KUBE_FORBIDDEN');
    expect(enrollCalls()).toBe(0);
  });
});
