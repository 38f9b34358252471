import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeIdentity } from '../../src/identity/index.js';
import { AGENT, type ClusterFixture, clusterFixture, NS, SECRET, serviceAccountRoot } from './cluster-fixture.js';
import { expectNoSecrets } from './local-fixture.js';
import { PROGRAM } from './run-cli.js';

let fx: ClusterFixture;
beforeEach(async () => {
  fx = await clusterFixture();
});
afterEach(async () => {
  await fx.close();
});

const enrollCalls = () => fx.enrollment.requests.filter((r) => r.route === 'enroll');
const secretWrites = () =>
  fx.kube.requests.filter((r) => r.resource === 'secrets' && (r.verb === 'update' || r.verb === 'create') && r.query.dryRun !== 'All');

function json(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.trim()) as Record<string, unknown>;
}

function secretsOf(fx: ClusterFixture): string[] {
  const data = fx.secretData();
  const values = [fx.enrollment.options.apiKeys[0]!, fx.enrollment.options.appKeys[0]!];
  for (const key of ['private_key', 'previous_private_key']) {
    if (!data[key]) continue;
    values.push(data[key]!, (JSON.parse(Buffer.from(data[key]!, 'base64url').toString()) as { d: string }).d);
  }
  return values;
}

describe('rotate-par-identity', () => {
  it('creates the Secret when absent: type, labels, data keys, cluster-id ConfigMap', async () => {
    const run = await fx.rotate(['--json']);
    expect(run.code, run.stderr).toBe(0);
    const secret = fx.secret()!;
    const data = fx.secretData();
    expect(secret.type).toBe('Opaque');
    expect(secret.metadata.labels).toEqual({
      'app.kubernetes.io/name': 'datadog-cluster-agent',
      'app.kubernetes.io/component': 'private-action-runner',
      'app.kubernetes.io/managed-by': 'datadog-cluster-agent',
    });
    expect(Object.keys(data).sort()).toEqual(['api_key_hash', 'orch_cluster_id', 'private_key', 'urn']);
    const identity = decodeIdentity({ privateKey: data.private_key!, urn: data.urn! });
    const kubeSystemUid = fx.kube.getObject('v1', 'Namespace', undefined, 'kube-system')!.metadata.uid;
    expect(data.orch_cluster_id).toBe(kubeSystemUid);
    // Off-cluster: in the namespace of the cluster-agent Deployment (found by its Helm label).
    expect(fx.kube.getObject('v1', 'ConfigMap', NS, 'datadog-cluster-id')?.data).toEqual({ id: kubeSystemUid });
    expect(fx.kube.getObject('v1', 'ConfigMap', 'default', 'datadog-cluster-id')).toBeUndefined();
    expect(json(run.stdout)).toMatchObject({
      status: 'ok',
      urn: data.urn,
      fingerprint: identity.key.kid,
      namespace: NS,
      secretName: SECRET,
      action: 'created',
      resourceVersion: secret.metadata.resourceVersion,
      verify: { performed: true, ok: true },
    });
    // The cluster-agent flavor of the enrollment request.
    const body = JSON.parse(enrollCalls()[0]!.body) as { data: { attributes: Record<string, unknown> } };
    expect(body.data.attributes).toMatchObject({ agent_flavor: 'cluster_agent', orch_cluster_id: kubeSystemUid });
    expect(body.data.attributes.runner_name).toMatch(/^e2e-cluster-\d{14}$/);
    expect(body.data.attributes).not.toHaveProperty('agent_hostname');
    expectNoSecrets(run, secretsOf(fx));
  });

  it('updates when present: existing labels kept, previous identity kept, resourceVersion guard used', async () => {
    expect((await fx.rotate()).code).toBe(0);
    const first = fx.secretData();
    const s = fx.secret()!;
    s.metadata.labels = { ...s.metadata.labels, team: 'sre' };
    fx.kube.updateObject(s);
    const readRv = fx.secret()!.metadata.resourceVersion;
    const run = await fx.rotate();
    expect(run.code, run.stderr).toBe(0);
    const second = fx.secretData();
    expect(second.urn).not.toBe(first.urn);
    expect(second.previous_urn).toBe(first.urn);
    expect(second.previous_private_key).toBe(first.private_key);
    expect(fx.secret()!.metadata.labels).toMatchObject({ team: 'sre', 'app.kubernetes.io/name': 'datadog-cluster-agent' });
    const update = secretWrites().at(-1)!;
    expect(update.verb).toBe('update');
    expect(run.stdout).toContain(`rotated: ${second.urn}`);
    expect(run.stdout).toContain(`datadog/${SECRET} updated`);
    expect(readRv).not.toBe(fx.secret()!.metadata.resourceVersion);
    expectNoSecrets(run, secretsOf(fx));
  });

  it('--no-keep-previous drops previous_*', async () => {
    expect((await fx.rotate()).code).toBe(0);
    expect((await fx.rotate(['--no-keep-previous'])).code).toBe(0);
    expect(Object.keys(fx.secretData()).sort()).toEqual(['api_key_hash', 'orch_cluster_id', 'private_key', 'urn']);
  });

  it('a change between our read and our write → exit 6 CONFLICT, Secret untouched, orphaned URN printed', async () => {
    expect((await fx.rotate()).code).toBe(0);
    let updates = 0;
    // Between the pending key's update and the identity's: the runner is enrolled, the write refused.
    fx.kube.faults.beforeNext(
      { verb: 'update', resource: 'secrets', predicate: (r) => r.query.dryRun !== 'All' && ++updates === 2 },
      () => {
        const s = fx.secret()!;
        s.data = {
          ...(s.data as Record<string, string>),
          urn: Buffer.from('urn:dd:apps:on-prem-runner:us1:1:someone-else').toString('base64'),
        };
        fx.kube.updateObject(s);
      },
    );
    const run = await fx.rotate(['--json']);
    expect(run.code, run.stderr).toBe(6);
    expect(fx.secretData().urn).toBe('urn:dd:apps:on-prem-runner:us1:1:someone-else');
    const out = json(run.stdout) as { code: string; details: { orphanedUrn: string } };
    expect(out.code).toBe('CONFLICT');
    const orphan = fx.enrollment.runners.at(-1)!.runnerId;
    expect(out.details.orphanedUrn).toContain(orphan);
    expect(run.stderr).toContain('remove it in Datadog');
    expect(run.stderr).toContain('the object has been modified');
  });

  it('a Role that forbids update fails before any enrollment request', async () => {
    // The agent's service account lives in NS: its cluster-id ConfigMap is there too.
    const env = { PAR_IDENTITY_SA_ROOT: await serviceAccountRoot(fx, NS) };
    expect((await fx.rotate([], { env })).code).toBe(0);
    fx.enrollment.reset();
    const readOnly = await fx.kubeconfigFor('read-only', [
      { apiGroups: [''], resources: ['secrets'], resourceNames: [SECRET], verbs: ['get'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create'] },
    ]);
    const before = fx.secret()!.metadata.resourceVersion;
    const run = await fx.run(['rotate-par-identity', '-c', fx.dir, '--kubeconfig', readOnly], { env });
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[KUBE_FORBIDDEN]');
    expect(run.stderr).toContain('cannot update resource "secrets"');
    expect(enrollCalls()).toHaveLength(0);
    expect(fx.secret()!.metadata.resourceVersion).toBe(before);
  });

  it('a Role restricted by resourceNames to get/update the one Secret is enough', async () => {
    const env = { PAR_IDENTITY_SA_ROOT: await serviceAccountRoot(fx, NS) };
    expect((await fx.rotate([], { env })).code).toBe(0);
    const scoped = await fx.kubeconfigFor('scoped', [
      { apiGroups: [''], resources: ['secrets'], resourceNames: [SECRET], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['datadog-cluster-id'], verbs: ['get'] },
    ]);
    const run = await fx.run(['rotate-par-identity', '-c', fx.dir, '--kubeconfig', scoped], { env });
    expect(run.code, run.stderr).toBe(0);
    // No right to create Events: the audit Event is a warning, never a failure.
    expect(run.stderr).toMatch(/warning: .*IdentityRotated/);
  });

  it('records an IdentityRotated Event on the Secret with old and new fingerprints, never key material', async () => {
    const first = json((await fx.rotate(['--json'])).stdout);
    const second = await fx.rotate(['--json']);
    expect(second.code, second.stderr).toBe(0);
    const out = json(second.stdout);
    const events = fx.kube
      .listObjects('v1', 'Event', NS)
      .filter((e) => (e as { reason?: string }).reason === 'IdentityRotated') as unknown as {
      message?: string;
      involvedObject: { kind: string; name: string };
    }[];
    expect(events).toHaveLength(2);
    const last = events.find((e) => e.message?.includes(String(out.fingerprint)))!;
    expect(last.involvedObject).toMatchObject({ kind: 'Secret', name: SECRET });
    expect(last.message).toContain(String(first.fingerprint));
    expect(last.message).toContain(String(out.urn));
    expect(JSON.stringify(events)).not.toContain(fx.secretData().private_key!);
  });

  it('--dry-run reads and dry-runs the update server-side, but enrolls and writes nothing', async () => {
    const run = await fx.rotate(['--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ dryRun: true, action: 'create', namespace: NS });
    expect(fx.secret()).toBeUndefined();
    expect(fx.kube.getObject('v1', 'ConfigMap', NS, 'datadog-cluster-id')).toBeUndefined();
    expect(enrollCalls()).toHaveLength(0);
    expect(fx.kube.requests.some((r) => r.resource === 'secrets' && r.verb === 'create' && r.query.dryRun === 'All')).toBe(true);
  });

  it('a real run that stops in pre-flight has created nothing: the cluster-id ConfigMap is created by the write', async () => {
    const run = await fx.rotate(['--rollout', 'deployment/does-not-exist']);
    expect(run.code, run.stderr).toBe(10);
    expect(run.stderr).toContain('error[WORKLOAD_MISSING]');
    expect(fx.kube.getObject('v1', 'ConfigMap', NS, 'datadog-cluster-id')).toBeUndefined();
    expect(fx.secret()).toBeUndefined();
    // The create was checked all the same, as a server-side dry run.
    expect(fx.kube.requests.some((r) => r.resource === 'configmaps' && r.verb === 'create' && r.query.dryRun === 'All')).toBe(true);
    expect(enrollCalls()).toHaveLength(0);
  });

  it('a token that may not create the cluster-id ConfigMap fails the pre-flight, dry run or not, before enrolling', async () => {
    const noCreate = await fx.kubeconfigFor('no-configmap-create', [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] },
    ]);
    for (const extra of [['--dry-run'], []]) {
      const run = await fx.run(['rotate-par-identity', '-c', fx.dir, '--kubeconfig', noCreate, ...extra]);
      expect(run.code, run.stderr).toBe(9);
      expect(run.stderr).toContain('error[KUBE_FORBIDDEN]');
      // The ConfigMap is looked up in the agent's namespace (missing there), so the next missing grant is the fallback's.
      expect(run.stderr).toContain('reading namespace kube-system (cluster id fallback)');
      expect(run.stderr).not.toContain('ConfigMap default/');
    }
    expect(enrollCalls()).toHaveLength(0);
    expect(fx.secret()).toBeUndefined();
  });

  it("off-cluster: the cluster-id ConfigMap of the cluster agent's namespace (found by its labels), never default's", async () => {
    const valid = '0c3f6a4e-6a0b-4c0e-9d4e-2f1a7b9c8d01';
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'datadog-cluster-id', namespace: 'default' },
      data: { id: '11111111-2222-3333-4444-555555555555' },
    });
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'datadog-cluster-id', namespace: NS },
      data: { id: valid },
    });
    expect((await fx.rotate()).code).toBe(0);
    expect(fx.secretData().orch_cluster_id).toBe(valid);
  });

  it('an id that is not 36 bytes is replaced with the kube-system UID, as the agent does', async () => {
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'datadog-cluster-id', namespace: NS },
      data: { id: 'cluster-1234', other: 'kept' },
    });
    const run = await fx.rotate(['--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    const kubeSystemUid = fx.kube.getObject('v1', 'Namespace', undefined, 'kube-system')!.metadata.uid;
    expect(fx.secretData().orch_cluster_id).toBe(kubeSystemUid);
    expect(fx.kube.getObject('v1', 'ConfigMap', NS, 'datadog-cluster-id')?.data).toEqual({ id: kubeSystemUid, other: 'kept' });
    expect(run.stderr).toContain('not 36 bytes');
  });

  it('off-cluster with kube_resources_namespace and no cluster agent found: refuses, naming what it looked for', async () => {
    fx.kube.deleteObject('apps/v1', 'Deployment', NS, 'dd-release-cluster-agent');
    const run = await fx.rotate(['--no-verify']);
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[NAMESPACE_UNKNOWN]');
    expect(run.stderr).toContain('cluster-agent Deployments (Helm/Operator labels): none found');
    expect(enrollCalls()).toHaveLength(0);
    expect(fx.secret()).toBeUndefined();
    expect(fx.kube.getObject('v1', 'ConfigMap', 'default', 'datadog-cluster-id')).toBeUndefined();
  });

  it('reads and creates the cluster-id ConfigMap in the service-account namespace, even when the Secret lives elsewhere', async () => {
    const saRoot = await serviceAccountRoot(fx, 'other');
    const run = await fx.rotate(['--no-verify'], { env: { PAR_IDENTITY_SA_ROOT: saRoot } });
    expect(run.code, run.stderr).toBe(0);
    const kubeSystemUid = fx.kube.getObject('v1', 'Namespace', undefined, 'kube-system')?.metadata.uid;
    expect(fx.kube.getObject('v1', 'ConfigMap', 'other', 'datadog-cluster-id')?.data).toEqual({ id: kubeSystemUid });
    expect(fx.kube.getObject('v1', 'ConfigMap', NS, 'datadog-cluster-id')).toBeUndefined();
    expect(fx.secretData(SECRET, NS).orch_cluster_id).toBe(kubeSystemUid);
  });

  it('points at the Helm/Operator Secret name when the default one is missing', async () => {
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'datadog-private-action-runner-identity', namespace: NS },
      type: 'Opaque',
      data: {},
    });
    const run = await fx.rotate();
    expect(run.code).toBe(9);
    expect(run.stderr).toContain('error[SECRET_NAME_MISMATCH]');
    expect(run.stderr).toContain('--secret-name datadog-private-action-runner-identity');
    expect(enrollCalls()).toHaveLength(0);
  });

  it('refuses when identity_use_k8s_secret is false (exit 3)', async () => {
    const run = await fx.rotate([], { env: { DD_PRIVATE_ACTION_RUNNER_IDENTITY_USE_K8S_SECRET: 'false' } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('error[SECRET_STORAGE_DISABLED]');
  });

  it('fails clearly with no Kubernetes configuration at all (never localhost:8080)', async () => {
    const run = await fx.run(['rotate-par-identity', '-c', fx.dir]);
    expect(run.code).toBe(9);
    expect(run.stderr).toContain('error[KUBE_NOT_CONFIGURED]');
    expect(run.stderr).toContain('never falls back to http://localhost:8080');
  });
});

describe('namespace and name resolution order', () => {
  it('-n > kube_resources_namespace > service-account namespace, never the context; flag > config > default name', async () => {
    const saRoot = await serviceAccountRoot(fx, 'other');
    await fx.writeConfig('cluster_name: c');
    // With no cluster agent to take the settings from, -c is the run's config (issue 23's rules).
    fx.kube.deleteObject('apps/v1', 'Deployment', NS, AGENT);
    // The admin kubeconfig's context names namespace datadog: never taken for the identity Secret.
    const offCluster = await fx.rotate(['--no-verify']);
    expect(offCluster.code, offCluster.stderr).toBe(9);
    expect(offCluster.stderr).toContain('error[NAMESPACE_UNKNOWN]');
    expect(enrollCalls()).toHaveLength(0);
    const inPod = await fx.rotate(['--no-verify'], { env: { PAR_IDENTITY_SA_ROOT: saRoot } });
    expect(inPod.code, inPod.stderr).toBe(0);
    expect(inPod.stderr).toContain(`secret: other/${SECRET} (namespace from service-account namespace file`);
    expect(fx.secret(SECRET, 'other')).toBeDefined();
    expect(fx.secret(SECRET, NS)).toBeUndefined();
    await fx.writeConfig(`cluster_name: c\nkube_resources_namespace: ${NS}`);
    const extra = join(fx.dir, 'extra.yaml');
    await writeFile(extra, 'private_action_runner:\n  identity_secret_name: from-config\n');
    const fromConfig = await fx.rotate(['--no-verify', '-E', extra], { env: { PAR_IDENTITY_SA_ROOT: saRoot } });
    expect(fromConfig.code, fromConfig.stderr).toBe(0);
    expect(fx.secret('from-config', NS)).toBeDefined();
    const fromFlags = await fx.rotate(['--no-verify', '-n', NS, '--secret-name', 'from-flag'], { env: { PAR_IDENTITY_SA_ROOT: saRoot } });
    expect(fromFlags.code, fromFlags.stderr).toBe(0);
    expect(fx.secret('from-flag', NS)).toBeDefined();
  });

  it('-n that differs from kube_resources_namespace refuses, naming both; nothing enrolled', async () => {
    const run = await fx.rotate(['--no-verify', '-n', 'other']);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('error[NAMESPACE_MISMATCH]');
    expect(run.stderr).toContain(`-n other differs from kube_resources_namespace`);
    expect(run.stderr).toContain(`= ${NS}`);
    expect(enrollCalls()).toHaveLength(0);
    expect(fx.secret(SECRET, 'other')).toBeUndefined();
  });

  it('in a Pod: the service account token and CA are used, and its namespace', async () => {
    const token = 'in-cluster-token';
    fx.kube.addToken(token, {
      user: 'system:serviceaccount:other:dca',
      namespace: 'other',
      rules: [
        { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['*'] },
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
      ],
    });
    const root = await serviceAccountRoot(fx, 'other', token);
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'datadog-cluster-id', namespace: 'other' },
      data: { id: 'a0a0a0a0-b1b1-c2c2-d3d3-e4e4e4e4e4e4' },
    });
    await fx.writeConfig('cluster_name: c');
    const url = new URL(fx.kube.url);
    const run = await fx.run(['rotate-par-identity', '-c', fx.dir, '--no-verify'], {
      env: { PAR_IDENTITY_SA_ROOT: root, KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('in-cluster service account');
    expect(fx.secretData(SECRET, 'other').orch_cluster_id).toBe('a0a0a0a0-b1b1-c2c2-d3d3-e4e4e4e4e4e4');
  });
});

describe('status --secret and rollback --secret', () => {
  it('shows both identities, then swaps them back under the resourceVersion guard', async () => {
    expect((await fx.rotate()).code).toBe(0);
    const first = fx.secretData();
    expect((await fx.rotate()).code).toBe(0);
    const second = fx.secretData();
    const status = await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--verify', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(json(status.stdout)).toMatchObject({ current: { urn: second.urn }, previous: { urn: first.urn }, verify: { ok: true } });
    const rollback = await fx.run(['rollback', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig]);
    expect(rollback.code, rollback.stderr).toBe(0);
    const after = fx.secretData();
    expect([after.urn, after.private_key, after.previous_urn]).toEqual([first.urn, first.private_key, second.urn]);
    expectNoSecrets(status, secretsOf(fx));
    expectNoSecrets(rollback, secretsOf(fx));
  });

  it('rollback --secret refuses without a previous identity (exit 7)', async () => {
    expect((await fx.rotate(['--no-keep-previous'])).code).toBe(0);
    const run = await fx.run(['rollback', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig]);
    expect(run.code).toBe(7);
    expect(run.stderr).toContain('error[NO_BACKUP]');
  });
});

describe('unknown outcomes are resolved by reading the Secret back, never guessed', () => {
  // The rotation's identity update follows the update that keeps the pending key and, in a run that
  // verifies, the one that records the enrolled URN with it (docs/identity-lifecycle.md §3).
  const identityUpdate = (nth = 3) => {
    let seen = 0;
    return {
      verb: 'update',
      resource: 'secrets',
      predicate: (r: { query: Record<string, string> }) => r.query.dryRun !== 'All' && ++seen === nth,
    };
  };

  it.each([
    ['500 after the update was applied', { code: 500, afterApply: true as const }],
    ['504 after the update was applied', { code: 504, afterApply: true as const }],
    ['connection reset after the update was applied', { afterApply: 'reset' as const }],
  ])('%s → success, the new identity in service, said plainly', async (_name, fault) => {
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    fx.kube.faults.failNext(identityUpdate(), fault);
    const run = await fx.rotate(['--json']);
    expect(run.code, run.stderr).toBe(0);
    const out = json(run.stdout);
    expect(fx.secretData().urn).toBe(out.urn);
    expect(run.stderr).toMatch(/reading the Secret back shows the new identity: it was applied/);
    expect(run.stderr).not.toMatch(/remove it in Datadog/);
  });

  it('a 500 that was NOT applied → exit 9, the Secret unchanged, the enrolled runner reported as an orphan', async () => {
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    const before = fx.secretData();
    fx.kube.faults.failNext(identityUpdate(), { code: 500 });
    const run = await fx.rotate(['--json']);
    expect(run.code, run.stderr).toBe(9);
    // The identity is as it was; the key sent stays pending in the Secret, for the next run to report.
    const { pending_private_key: pending, ...after } = fx.secretData();
    expect(after).toEqual(before);
    expect(pending).toContain('"runner_name"');
    expect(run.stderr).toContain('its key stays pending in Secret');
    const error = json(run.stdout) as { details: { orphanedUrn: string } };
    expect(error.details.orphanedUrn).toMatch(/^urn:dd:apps:on-prem-runner:/);
    expect(error.details.orphanedUrn).not.toBe(before.urn);
  });

  it('applied, then the read back fails too → exit 12 OUTCOME_UNKNOWN, which never suggests removing a runner', async () => {
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    fx.kube.faults.failNext(identityUpdate(2), { code: 503, afterApply: true });
    // From the update on, every read fails too (the read-back is retried on new connections, docs/safety.md): the outcome cannot be told.
    fx.kube.faults.beforeNext(
      identityUpdate(2),
      () => void fx.kube.faults.failNext({ verb: 'get', resource: 'secrets' }, { code: 503, times: 1000 }),
    );
    const run = await fx.rotate(['--no-verify']);
    expect(run.code, run.stderr).toBe(12);
    expect(run.stderr).toContain('error[OUTCOME_UNKNOWN]');
    expect(run.stderr).toContain('Do not remove any runner in Datadog until you have checked');
    expect(run.stderr).toContain(`${PROGRAM} status --secret`);
  });

  it('rollback --secret: a 500 after the swap was applied → success', async () => {
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    const first = fx.secretData().urn;
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    // rollback --no-verify: the swap is its one update.
    fx.kube.faults.failNext(identityUpdate(1), { code: 500, afterApply: true });
    const run = await fx.run(['rollback', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    expect(fx.secretData().urn).toBe(first);
  });
});

describe('a corrupt current identity in the Secret', () => {
  it('keeps the valid previous_* keys instead of dropping them', async () => {
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    const good = fx.secretData();
    const secret = structuredClone(fx.secret()!) as unknown as { data: Record<string, string> };
    secret.data.private_key = Buffer.from('not-a-key').toString('base64');
    fx.kube.updateObject(secret as never);
    const run = await fx.rotate(['--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('the valid previous identity already there stays');
    const after = fx.secretData();
    expect(after.previous_urn).toBe(good.previous_urn);
    expect(after.previous_private_key).toBe(good.previous_private_key);
  });
});
