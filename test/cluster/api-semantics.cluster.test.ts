import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_KIND, issueToken, only, startTestCluster, type TestCluster } from './test-cluster.js';

// The apiserver behaviours the product's code branches on, asserted with the real apiserver's exact
// words: the same assertions run on the emulator (npm test) and on the real control plane
// (npm run test:cluster), so an emulator that drifts from kube-apiserver fails here first.

let cluster: TestCluster;
let ns: string;
let sa: string;
const NAME = 'guarded';

beforeAll(async () => {
  cluster = await startTestCluster();
  ns = await cluster.freshNamespace('semantics');
  await cluster.create(
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: NAME, namespace: ns }, stringData: { a: '1' } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'other', namespace: ns }, stringData: { a: '1' } },
  );
  sa = await cluster.serviceAccountKubeconfig(ns, 'scoped', [
    { apiGroups: [''], resources: ['secrets'], resourceNames: [NAME], verbs: ['get', 'list', 'watch', 'update', 'create'] },
  ]);
});
afterAll(async () => {
  await cluster?.close();
});

const user = () => `system:serviceaccount:${ns}:scoped`;

describe(`apiserver semantics the product relies on (${CLUSTER_KIND} cluster)`, () => {
  it('an update with a stale resourceVersion is a 409 Conflict with the apiserver’s message', async () => {
    const secret = (await cluster.getJson('secret', NAME, ns))!;
    await cluster.kubectlOk(['label', 'secret', NAME, '-n', ns, 'bump=1']);
    const r = await cluster.kubectl(['replace', '-f', '-'], { stdin: JSON.stringify(secret) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      `Operation cannot be fulfilled on secrets "${NAME}": the object has been modified; please apply your changes to the latest version and try again`,
    );
  });

  it('a server-side dry-run update answers the object but stores nothing', async () => {
    const before = (await cluster.getJson('secret', NAME, ns))!.metadata.resourceVersion;
    const r = await cluster.kubectl(['label', 'secret', NAME, '-n', ns, 'dry=1', '--dry-run=server', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).metadata.labels.dry).toBe('1');
    const after = (await cluster.getJson('secret', NAME, ns))!;
    expect(after.metadata.resourceVersion).toBe(before);
    expect(after.metadata.labels?.dry).toBeUndefined();
  });

  it('resourceNames: get of another name is Forbidden, in the apiserver’s words', async () => {
    const r = await cluster.kubectl(['get', 'secret', 'other', '-n', ns], { kubeconfig: sa });
    expect(r.stderr).toContain(
      `secrets "other" is forbidden: User "${user()}" cannot get resource "secrets" in API group "" in the namespace "${ns}"`,
    );
  });

  it('resourceNames: list and watch need the metadata.name field selector', async () => {
    const plain = await cluster.kubectl(['get', 'secrets', '-n', ns], { kubeconfig: sa });
    expect(plain.stderr).toContain(
      `secrets is forbidden: User "${user()}" cannot list resource "secrets" in API group "" in the namespace "${ns}"`,
    );
    const named = await cluster.kubectl(['get', 'secrets', '-n', ns, '--field-selector', `metadata.name=${NAME}`, '-o', 'name'], {
      kubeconfig: sa,
    });
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout.trim()).toBe(`secret/${NAME}`);
    const watchPlain = await cluster.kubectl(['get', '--raw', `/api/v1/namespaces/${ns}/secrets?watch=true&timeoutSeconds=1`], {
      kubeconfig: sa,
    });
    expect(watchPlain.code).not.toBe(0);
    expect(watchPlain.stderr).toMatch(/Forbidden|forbidden/);
    const watchNamed = await cluster.kubectl(
      ['get', '--raw', `/api/v1/namespaces/${ns}/secrets?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3D${NAME}`],
      { kubeconfig: sa },
    );
    expect(watchNamed.code, watchNamed.stderr).toBe(0);
    expect(watchNamed.stdout).toContain('"type":"ADDED"');
  });

  it('resourceNames cannot grant create (a create names no object when it is authorised)', async () => {
    const r = await cluster.kubectl(['create', 'secret', 'generic', NAME, '-n', ns, '--from-literal=a=b', '--dry-run=server'], {
      kubeconfig: sa,
    });
    expect(r.stderr).toContain(
      `secrets is forbidden: User "${user()}" cannot create resource "secrets" in API group "" in the namespace "${ns}"`,
    );
  });

  const appsValidation = only('real', 'the emulator stores workloads without the apps/v1 validation');
  it.skipIf(appsValidation.skip)(
    `a DaemonSet strategy with maxSurge and maxUnavailable both 0 is refused ${appsValidation.label}`,
    async () => {
      await cluster.create({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'ds', namespace: ns },
        spec: {
          selector: { matchLabels: { app: 'ds' } },
          template: {
            metadata: { labels: { app: 'ds' } },
            spec: { nodeSelector: { 'par-test-pool': 'none' }, containers: [{ name: 'c', image: 'x' }] },
          },
        },
      });
      const r = await cluster.kubectl([
        'patch',
        'daemonset',
        'ds',
        '-n',
        ns,
        '--type=strategic',
        '-p',
        JSON.stringify({ spec: { updateStrategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } } }),
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0');
    },
  );

  it('TokenRequest: an expiration under 10 minutes is refused', async () => {
    await expect(issueToken(cluster, ns, 'scoped', 100)).rejects.toThrow('may not specify a duration less than 10 minutes');
  });
});
