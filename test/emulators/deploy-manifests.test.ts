import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubeEmulator, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';
import { canI as review, rulesIn } from './access-review.js';
import { call } from './kube-helpers.js';
import { kubectlIn, kubectlPath, kubectlRequired } from './kubectl-runner.js';

// deploy/ manifests as a cluster would take them: a server-side dry run of every file, then the
// CronJob's RBAC applied for real and checked verb by verb with access reviews as that user
// (what `kubectl auth can-i --as` asks, in JSON: access-review.ts).

const DEPLOY = resolve(import.meta.dirname, '../../deploy');
const NS = 'datadog';
const SA = `system:serviceaccount:${NS}:par-identity-rotator`;

describe.skipIf(!kubectlPath && !kubectlRequired)('deploy/ manifests against the emulator', () => {
  let emu: KubeEmulator;
  let dir: string;
  let kubectl: ReturnType<typeof kubectlIn>;
  const canI = (verb: string, what: string) => review(kubectl, verb, what, { namespace: NS, as: SA });

  /** `verb what: yes|no` for each pair, a few kubectl processes at a time. */
  const answers = async (pairs: string[][]): Promise<string[]> => {
    const out: string[] = [];
    for (let i = 0; i < pairs.length; i += 4) {
      const batch = pairs.slice(i, i + 4);
      out.push(...(await Promise.all(batch.map(async ([verb, what]) => `${verb} ${what}: ${await canI(verb!, what!)}`))));
    }
    return out;
  };

  beforeAll(async () => {
    expect(kubectlPath, 'kubectl must be on PATH when CI=true').toBeTruthy();
    emu = await startKubeEmulator();
    seedNamespaces(emu, ['default', NS]);
    dir = await mkdtemp(join(tmpdir(), 'deploy-manifests-'));
    const cfg = join(dir, 'admin.yaml');
    await emu.writeKubeconfig(cfg, { namespace: NS });
    kubectl = kubectlIn(dir, cfg);
  });
  afterAll(async () => {
    await emu?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('kubectl apply --dry-run=server accepts every manifest and stores nothing', async () => {
    const rv = emu.resourceVersion;
    const run = await kubectl(['apply', '--dry-run=server', '-f', DEPLOY]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n').sort()).toEqual(
      [
        'clusterrole.rbac.authorization.k8s.io/par-identity-rollout-capacity created (server dry run)',
        'clusterrolebinding.rbac.authorization.k8s.io/par-identity-rollout-capacity created (server dry run)',
        'cronjob.batch/par-identity-rotate created (server dry run)',
        'deployment.apps/private-action-runner created (server dry run)',
        'role.rbac.authorization.k8s.io/par-identity-rotator created (server dry run)',
        'role.rbac.authorization.k8s.io/par-identity-watch created (server dry run)',
        'rolebinding.rbac.authorization.k8s.io/par-identity-rotator created (server dry run)',
        'rolebinding.rbac.authorization.k8s.io/par-identity-watch created (server dry run)',
        'serviceaccount/par-identity-rotator created (server dry run)',
        'serviceaccount/par-identity-watch created (server dry run)',
      ].sort(),
    );
    const creates = emu.requests.filter((r) => r.verb === 'create');
    expect(creates.length).toBe(10);
    expect(creates.every((r) => r.query['dryRun'] === 'All' && r.status === 201)).toBe(true);
    expect(emu.resourceVersion).toBe(rv);
  });

  it('the dry run refuses what a cluster would refuse (a RoleBinding to an unknown kind)', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(
      bad,
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: RoleBinding',
        'metadata: {name: bad, namespace: datadog}',
        'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Rol, name: x}',
        'subjects: [{kind: ServiceAccount, name: x}]',
        '',
      ].join('\n'),
    );
    const run = await kubectl(['apply', '--dry-run=server', '-f', bad]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('RoleBinding "bad" is invalid: roleRef.kind: Unsupported value: "Rol"');
    // A CronJob's validation (schedule, restartPolicy) is the real apiserver's: the emulator stores workloads as written.
  });

  it('the CronJob’s Role grants each verb its command needs (--agent, the rotation, --rollout), on the named objects only', {
    timeout: 120_000,
  }, async () => {
    expect(await canI('get', 'secrets/datadog-private-action-runner-identity')).toBe('no');
    const applied = await kubectl(['apply', '-f', join(DEPLOY, 'rotation-cronjob.yaml')]);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    const granted = [
      // --agent deployment/datadog-cluster-agent: the Deployment and the keys Secret its env names.
      ['get', 'deployments.apps/datadog-cluster-agent'],
      ['get', 'secrets/datadog-secret'],
      // The rotation.
      ['get', 'secrets/datadog-private-action-runner-identity'],
      ['update', 'secrets/datadog-private-action-runner-identity'],
      ['list', 'secrets/datadog-private-action-runner-identity'],
      ['watch', 'secrets/datadog-private-action-runner-identity'],
      ['get', 'configmaps/datadog-cluster-id'],
      ['create', 'events.events.k8s.io'],
      // --rollout.
      ['patch', 'deployments.apps/datadog-cluster-agent'],
      ['list', 'pods'],
    ];
    expect(await answers(granted)).toEqual(granted.map(([verb, what]) => `${verb} ${what}: yes`));
    const refused = [
      ['list', 'secrets'],
      ['watch', 'secrets'],
      ['update', 'secrets/datadog-secret'],
      ['list', 'secrets/datadog-secret'],
      ['get', 'secrets/datadog-cluster-agent'],
      ['get', 'secrets/private-action-runner-identity'],
      ['create', 'secrets'],
      ['delete', 'secrets/datadog-private-action-runner-identity'],
      ['patch', 'secrets/datadog-private-action-runner-identity'],
      ['get', 'configmaps/other'],
      ['update', 'configmaps/datadog-cluster-id'],
      ['get', 'deployments.apps/other'],
      ['list', 'deployments.apps'],
      ['patch', 'deployments.apps/other'],
      ['update', 'deployments.apps/datadog-cluster-agent'],
      ['delete', 'pods'],
      ['create', 'pods'],
      ['list', 'nodes'],
      ['create', 'events'],
      ['delete', 'events.events.k8s.io'],
    ];
    expect(await answers(refused)).toEqual(refused.map(([verb, what]) => `${verb} ${what}: no`));
    // `can-i --list` (a SelfSubjectRulesReview as that user) shows the Role's rules.
    const rules = await rulesIn(kubectl, NS, SA);
    expect(rules).toContainEqual(
      expect.objectContaining({
        resources: ['secrets'],
        resourceNames: ['datadog-private-action-runner-identity'],
        verbs: expect.arrayContaining(['get', 'list', 'watch', 'update']),
      }),
    );
    expect(rules).toContainEqual(expect.objectContaining({ resources: ['secrets'], resourceNames: ['datadog-secret'], verbs: ['get'] }));
    expect(rules).toContainEqual(expect.objectContaining({ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] }));
    // Nothing outside its namespace.
    expect(await review(kubectl, 'get', 'secrets/datadog-private-action-runner-identity', { namespace: 'default', as: SA })).toBe('no');
  });

  it('the CronJob carries no copy of the agent’s settings: it names the agent, in its own namespace', async () => {
    const docs = (await readFile(join(DEPLOY, 'rotation-cronjob.yaml'), 'utf8')).split(/^---$/m);
    const cron = docs.find((d) => /^kind: CronJob$/m.test(d))!;
    expect(cron).not.toMatch(/DD_[A-Z_]+|env:|envFrom:|my-cluster|datadoghq\.com/);
    expect(cron).toContain(
      [
        '- rotate-par-identity',
        '- --agent',
        '- deployment/datadog-cluster-agent',
        '- --if-older-than',
        '- 90d',
        '- --rollout',
        '- deployment/datadog-cluster-agent',
        '- --json',
      ]
        .map((a) => `                ${a}`)
        .join('\n'),
    );
    expect(cron).not.toMatch(/ -n\b|--namespace|-c\b/);
  });

  it('a bearer token of that ServiceAccount gets exactly what the applied Role grants', async () => {
    // How an e2e test runs the CronJob's command: a token whose user is the ServiceAccount, no grants of its own.
    emu.addToken('rotator-token', { user: SA, rules: [] });
    emu.createObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'datadog-private-action-runner-identity', namespace: NS },
      type: 'Opaque',
      data: {},
    });
    emu.createObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'datadog-secret', namespace: NS }, type: 'Opaque', data: {} });
    emu.createObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'datadog-cluster-agent', namespace: NS },
      type: 'Opaque',
      data: {},
    });
    expect(
      (await call(emu, 'GET', `/api/v1/namespaces/${NS}/secrets/datadog-private-action-runner-identity`, { token: 'rotator-token' }))
        .status,
    ).toBe(200);
    expect((await call(emu, 'GET', `/api/v1/namespaces/${NS}/secrets/datadog-secret`, { token: 'rotator-token' })).status).toBe(200);
    expect((await call(emu, 'GET', `/api/v1/namespaces/${NS}/secrets/datadog-cluster-agent`, { token: 'rotator-token' })).status).toBe(403);
    expect(
      (
        await call(emu, 'GET', `/api/v1/namespaces/${NS}/secrets?fieldSelector=metadata.name%3Ddatadog-private-action-runner-identity`, {
          token: 'rotator-token',
        })
      ).status,
    ).toBe(200);
    expect((await call(emu, 'GET', `/api/v1/namespaces/${NS}/secrets`, { token: 'rotator-token' })).status).toBe(403);
  });

  it('the optional capacity ClusterRole adds only cluster-wide list on nodes and Pods', { timeout: 120_000 }, async () => {
    const applied = await kubectl(['apply', '-f', join(DEPLOY, 'rbac-rollout-capacity.yaml')]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await canI('list', 'nodes')).toBe('yes');
    expect(await review(kubectl, 'list', 'pods', { as: SA })).toBe('yes');
    const refused = [
      ['get', 'nodes/n1'],
      ['patch', 'nodes/n1'],
      ['delete', 'pods'],
      ['list', 'secrets'],
    ];
    expect(await answers(refused)).toEqual(refused.map(([verb, what]) => `${verb} ${what}: no`));
  });

  it('impersonation itself needs the impersonate verb', async () => {
    emu.addToken('plain-user', { user: 'alice', namespace: NS, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] });
    const cfg = join(dir, 'alice.yaml');
    await emu.writeKubeconfig(cfg, { token: 'plain-user', namespace: NS });
    await expect(review(kubectlIn(dir, cfg), 'get', 'secrets/private-action-runner-identity', { namespace: NS, as: SA })).rejects.toThrow(
      `serviceaccounts "par-identity-rotator" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "${NS}"`,
    );
  });
});
