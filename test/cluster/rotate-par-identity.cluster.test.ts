import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildUrn, decodeIdentity, encodePrivateJwk, generateIdentityKey } from '../../src/identity/index.js';
import { startCli } from '../e2e/run-cli.js';
import { type AgentWorld, agentWorld, SECRET } from './agent-world.js';
import { startCuttingProxy } from './cutting-proxy.js';
import { CLUSTER_KIND, startTestCluster, stoppedByFailpoint, type TestCluster } from './test-cluster.js';

// rotate-par-identity and rotate-identity --k8s-secret against the cluster of this run (emulator or
// real control plane): every assertion reads the cluster through kubectl.

let cluster: TestCluster;
let w: AgentWorld;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.close();
});
beforeEach(async () => {
  w = await agentWorld(cluster);
});
afterEach(async () => {
  await w.close();
});

const secretRules = (verbs: string[]) => [
  { apiGroups: [''], resources: ['secrets'], resourceNames: [SECRET], verbs },
  { apiGroups: [''], resources: ['configmaps'], resourceNames: ['datadog-cluster-id'], verbs: ['get'] },
];

describe(`rotate-par-identity on the ${CLUSTER_KIND} cluster`, () => {
  it('creates the Secret when absent, with the cluster id of kube-system and its ConfigMap in the agent namespace', async () => {
    const run = await w.rotate(['--json']);
    expect(run.code, run.stderr).toBe(0);
    const secret = (await cluster.getJson('secret', SECRET, w.ns))!;
    expect(secret.type).toBe('Opaque');
    expect(secret.metadata.labels).toMatchObject({ 'app.kubernetes.io/component': 'private-action-runner' });
    const data = await w.secretData();
    expect(Object.keys(data).sort()).toEqual(['api_key_hash', 'orch_cluster_id', 'private_key', 'urn']);
    const identity = decodeIdentity({ privateKey: data.private_key!, urn: data.urn! });
    const kubeSystemUid = (await cluster.getJson('namespace', 'kube-system'))!.metadata.uid;
    expect(data.orch_cluster_id).toBe(kubeSystemUid);
    expect((await cluster.getJson('configmap', 'datadog-cluster-id', w.ns))!.data).toEqual({ id: kubeSystemUid });
    expect(JSON.parse(run.stdout)).toMatchObject({
      status: 'ok',
      urn: data.urn,
      fingerprint: identity.key.kid,
      namespace: w.ns,
      action: 'created',
      resourceVersion: secret.metadata.resourceVersion,
    });
  });

  it('rotates an existing Secret: labels merged, previous kept, a new resourceVersion', async () => {
    expect((await w.rotate()).code).toBe(0);
    const first = await w.secretData();
    await cluster.kubectlOk(['label', 'secret', SECRET, '-n', w.ns, 'team=sre']);
    const before = (await cluster.getJson('secret', SECRET, w.ns))!.metadata.resourceVersion;
    const run = await w.rotate();
    expect(run.code, run.stderr).toBe(0);
    const second = await w.secretData();
    expect(second.urn).not.toBe(first.urn);
    expect(second.previous_urn).toBe(first.urn);
    expect(second.previous_private_key).toBe(first.private_key);
    const secret = (await cluster.getJson('secret', SECRET, w.ns))!;
    expect(secret.metadata.labels).toMatchObject({ team: 'sre', 'app.kubernetes.io/name': 'datadog-cluster-agent' });
    expect(secret.metadata.resourceVersion).not.toBe(before);
  });

  it("killed after enrolling, under the agent's own Role: the key sent is pending in the Secret, status exits 15, the next run sets it aside", async () => {
    // The Secret exists (created by the admin): the agent's Role names it, so it may get and update it only.
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const sa = await cluster.serviceAccountKubeconfig(w.ns, 'agent', secretRules(['get', 'update']));
    const before = await w.secretData();
    const killed = await w.rotate(['--no-verify'], { kubeconfig: sa, env: { ...w.env, PAR_IDENTITY_FAILPOINT: 'after-enroll' } });
    expect(killed.signal).toBe('SIGKILL');
    const data = await w.secretData();
    expect([data.urn, data.private_key]).toEqual([before.urn, before.private_key]);
    const orphan = w.enrollment.runners.at(-1)!;
    const pending = JSON.parse(data.pending_private_key!) as { private_key: string; runner_name: string };
    expect(decodeIdentity({ privateKey: pending.private_key, urn: before.urn! }).key.kid).toBe(orphan.publicKeyThumbprint);
    const status = await w.run(['status', '--secret', '-c', w.dir, '--kubeconfig', sa, '--json']);
    expect(status.code, status.stderr).toBe(15);
    expect((JSON.parse(status.stdout) as { possibleOrphans: { state: string; fingerprint: string }[] }).possibleOrphans).toMatchObject([
      { state: 'pending', fingerprint: orphan.publicKeyThumbprint },
    ]);
    const next = await w.rotate(['--no-verify'], { kubeconfig: sa });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(orphan.publicKeyThumbprint);
    const after = await w.secretData();
    expect(after.pending_private_key).toBeUndefined();
    expect(Object.keys(after).filter((k) => k.startsWith('orphan_private_key.'))).toHaveLength(1);
  });

  it('another writer between our read and our write → CONFLICT (exit 6): nothing clobbered, the orphan named', async () => {
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    // Stopped right after enrolling, when the Secret has been read and the dry run passed.
    const cli = startCli(['rotate-par-identity', '-c', w.dir, '--kubeconfig', cluster.adminKubeconfig, '--json'], {
      env: { ...w.env, PAR_IDENTITY_FAILPOINT: 'after-enroll:stop' },
    });
    cli.child.stdin.end();
    await stoppedByFailpoint(cli.child.pid!);
    const other = buildUrn({ region: 'us1', orgId: 1, runnerId: 'someone-else' });
    await cluster.kubectlOk(['patch', 'secret', SECRET, '-n', w.ns, '--type=merge', '-p', JSON.stringify({ stringData: { urn: other } })]);
    cli.child.kill('SIGCONT');
    const { code } = await cli.exit;
    expect(code, cli.stderr()).toBe(6);
    expect((await w.secretData()).urn).toBe(other);
    const out = JSON.parse(cli.stdout()) as { code: string; details: { orphanedUrn: string } };
    expect(out.code).toBe('CONFLICT');
    expect(out.details.orphanedUrn).toContain(w.enrollment.runners.at(-1)!.runnerId);
    expect(cli.stderr()).toContain('the object has been modified');
  });

  it('a reply lost after the update was applied → resolved by reading the Secret back: success', async () => {
    // The proxy can forward a bearer token (not the admin's client certificate): the agent's own
    // ServiceAccount, scoped to the Secret that the first rotation creates.
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const sa = await cluster.serviceAccountKubeconfig(w.ns, 'agent', secretRules(['get', 'update']));
    const proxy = await startCuttingProxy(sa);
    try {
      const viaProxy = join(w.dir, 'via-proxy.kubeconfig');
      await writeFile(viaProxy, await proxy.kubeconfigFrom(sa), { mode: 0o600 });
      // The identity update is the rotation's second real PUT: the first keeps the pending key (docs/identity-lifecycle.md §3).
      let puts = 0;
      const cut = proxy.cutNext(
        (method, path) => method === 'PUT' && path.includes(`/secrets/${SECRET}`) && !path.includes('dryRun') && ++puts === 2,
      );
      const run = await w.rotate(['--json', '--no-verify'], { kubeconfig: viaProxy });
      await cut;
      expect(run.code, run.stderr).toBe(0);
      expect((await w.secretData()).urn).toBe(JSON.parse(run.stdout).urn);
      expect(run.stderr).toMatch(/reading the Secret back shows the new identity: it was applied/);
    } finally {
      await proxy.close();
    }
  });

  it('--dry-run: the server-side dry-run write only; nothing enrolled, nothing changed', async () => {
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const before = (await cluster.getJson('secret', SECRET, w.ns))!.metadata.resourceVersion;
    const calls = w.enrollCalls();
    const run = await w.rotate(['--dry-run']);
    expect(run.code, run.stderr).toBe(0);
    expect(w.enrollCalls()).toBe(calls);
    expect((await cluster.getJson('secret', SECRET, w.ns))!.metadata.resourceVersion).toBe(before);
  });

  it('a Role without update is refused by the server-side dry run, before anything is enrolled', async () => {
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const readOnly = await cluster.serviceAccountKubeconfig(w.ns, 'read-only', secretRules(['get']));
    const calls = w.enrollCalls();
    const run = await w.rotate([], { kubeconfig: readOnly });
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[KUBE_FORBIDDEN]');
    expect(run.stderr).toContain('cannot update resource "secrets"');
    expect(w.enrollCalls()).toBe(calls);
  });

  it('a Role scoped by resourceNames to get/update the one Secret is enough', async () => {
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const scoped = await cluster.serviceAccountKubeconfig(w.ns, 'scoped', secretRules(['get', 'update']));
    const run = await w.rotate([], { kubeconfig: scoped });
    expect(run.code, run.stderr).toBe(0);
  });
});

describe(`rotate-identity --k8s-secret (the Helm runner Secret) on the ${CLUSTER_KIND} cluster`, () => {
  it('rotates RUNNER_URN / RUNNER_PRIVATE_KEY, keeps PREVIOUS_* and unrelated keys', async () => {
    const seed = {
      RUNNER_URN: buildUrn({ region: 'us1', orgId: 1234567, runnerId: 'seed-runner' }),
      RUNNER_PRIVATE_KEY: encodePrivateJwk(generateIdentityKey()),
      OTHER: 'keep-me',
    };
    await cluster.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'par-runner', namespace: w.ns },
      type: 'Opaque',
      stringData: seed,
    });
    const run = await w.run([
      'rotate-identity',
      '-c',
      join(w.dir, 'datadog-cluster.yaml'),
      '--k8s-secret',
      'par-runner',
      '-n',
      w.ns,
      '--kubeconfig',
      cluster.adminKubeconfig,
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const data = await w.secretData('par-runner');
    expect(data.PREVIOUS_RUNNER_URN).toBe(seed.RUNNER_URN);
    expect(data.PREVIOUS_RUNNER_PRIVATE_KEY).toBe(seed.RUNNER_PRIVATE_KEY);
    expect(data.OTHER).toBe('keep-me');
    const identity = decodeIdentity({ privateKey: data.RUNNER_PRIVATE_KEY!, urn: data.RUNNER_URN! });
    expect(JSON.parse(run.stdout)).toMatchObject({
      status: 'ok',
      urn: data.RUNNER_URN,
      fingerprint: identity.key.kid,
      verify: { ok: true },
    });
  });
});

// docs/identity-lifecycle.md §2 and docs/identity-lifecycle.md §3: a rotation whose health check rejects the new key writes nothing,
// and rotations without a check (--no-verify) never push the last verified identity out of previous_*;
// the mark is an annotation the agent does not read.
describe(`the last verified identity on the ${CLUSTER_KIND} cluster`, () => {
  const reject = () => w.enrollment.script('health', { status: 401, body: '{"errors":["Unauthorized"]}' });
  const LAST_VERIFIED = 'par-identity.datadoghq.com/last-verified';

  it('rotate-par-identity: a rejected check writes nothing; two unverified rotations keep the verified identity as previous_*; status and rollback use it', async () => {
    expect((await w.rotate()).code).toBe(0);
    const verified = await w.secretData();
    const kid = decodeIdentity({ privateKey: verified.private_key!, urn: verified.urn! }).key.kid;
    const annotations = (await cluster.getJson('secret', SECRET, w.ns))!.metadata.annotations as Record<string, string>;
    expect(JSON.parse(annotations[LAST_VERIFIED]!)).toMatchObject({ fingerprint: kid, urn: verified.urn });
    reject();
    expect((await w.rotate()).code).toBe(8);
    expect((await w.secretData()).urn).toBe(verified.urn);
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const unverified = await w.secretData();
    expect(unverified.previous_urn).toBe(verified.urn);
    const second = await w.rotate(['--no-verify']);
    expect(second.code, second.stderr).toBe(0);
    const after = await w.secretData();
    // The old code kept the first failed run's identity here.
    expect(after.previous_urn).toBe(verified.urn);
    expect(after.previous_private_key).toBe(verified.private_key);
    expect(second.stderr).toContain(`${unverified.urn} (in service, never verified) is replaced and not kept`);
    const status = await w.run([
      'status',
      '--secret',
      '-c',
      join(w.dir, 'datadog-cluster.yaml'),
      '--kubeconfig',
      cluster.adminKubeconfig,
      '--json',
    ]);
    // The rejected run's key, set aside by the next rotation: the record of the runner to remove (exit 15).
    expect(status.code, status.stderr).toBe(15);
    expect(JSON.parse(status.stdout).lastVerified).toMatchObject({ fingerprint: kid, urn: verified.urn, is: 'previous' });
    const back = await w.run(['rollback', '--secret', '-c', join(w.dir, 'datadog-cluster.yaml'), '--kubeconfig', cluster.adminKubeconfig]);
    expect(back.code, back.stderr).toBe(0);
    expect((await w.secretData()).urn).toBe(verified.urn);
  });

  it('rotate-identity --k8s-secret: PREVIOUS_RUNNER_* keeps the verified identity across a rejected check and unverified rotations', async () => {
    const seed = {
      RUNNER_URN: buildUrn({ region: 'us1', orgId: 1234567, runnerId: 'seed-runner' }),
      RUNNER_PRIVATE_KEY: encodePrivateJwk(generateIdentityKey()),
    };
    await cluster.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'par-runner', namespace: w.ns },
      type: 'Opaque',
      stringData: seed,
    });
    const rotate = () =>
      w.run([
        'rotate-identity',
        '-c',
        join(w.dir, 'datadog-cluster.yaml'),
        '--k8s-secret',
        'par-runner',
        '-n',
        w.ns,
        '--kubeconfig',
        cluster.adminKubeconfig,
      ]);
    expect((await rotate()).code).toBe(0);
    const verified = await w.secretData('par-runner');
    reject();
    expect((await rotate()).code).toBe(8);
    expect((await w.secretData('par-runner')).RUNNER_URN).toBe(verified.RUNNER_URN);
    expect(
      (
        await w.run([
          'rotate-identity',
          '-c',
          join(w.dir, 'datadog-cluster.yaml'),
          '--k8s-secret',
          'par-runner',
          '-n',
          w.ns,
          '--kubeconfig',
          cluster.adminKubeconfig,
          '--no-verify',
        ])
      ).code,
    ).toBe(0);
    expect(
      (
        await w.run([
          'rotate-identity',
          '-c',
          join(w.dir, 'datadog-cluster.yaml'),
          '--k8s-secret',
          'par-runner',
          '-n',
          w.ns,
          '--kubeconfig',
          cluster.adminKubeconfig,
          '--no-verify',
        ])
      ).code,
    ).toBe(0);
    const after = await w.secretData('par-runner');
    expect(after.PREVIOUS_RUNNER_URN).toBe(verified.RUNNER_URN);
    expect(after.PREVIOUS_RUNNER_PRIVATE_KEY).toBe(verified.RUNNER_PRIVATE_KEY);
  });
});
