import { CoreV1Api, ListWatch, type V1Secret, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeEmulator } from '../../emulators/kube/index.js';
import { call, deployment, kubeConfigFor, parseErrorBody, secret, startSeeded } from './kube-helpers.js';

let emu: KubeEmulator;
const SA = 'system:serviceaccount:ns1:runner';

beforeAll(async () => {
  emu = await startSeeded();
  emu.createObject(secret('identity', 'ns1'));
  emu.createObject(secret('unrelated', 'ns1'));
  emu.createObject(secret('elsewhere', 'ns2'));
  // Like a Role in ns1 limited to one Secret by resourceNames.
  emu.addToken('sa-token', {
    user: SA,
    namespace: 'ns1',
    rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['identity'], verbs: ['get', 'list', 'watch', 'update', 'patch'] }],
  });
  emu.addToken('creator', {
    user: 'creator',
    namespace: 'ns1',
    rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['identity'], verbs: ['create'] }],
  });
  emu.addToken('cluster-reader', {
    user: 'reader',
    rules: [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get'], resourceNames: ['kube-system'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
      { apiGroups: ['apps'], resources: ['deployments/status'], verbs: ['patch'] },
    ],
  });
  emu.addToken('wild', { user: 'wild', namespace: 'ns2', rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] });
  emu.addToken('status-only', {
    user: 'status-only',
    namespace: 'ns2',
    rules: [{ apiGroups: ['apps'], resources: ['*/status'], verbs: ['update'] }],
  });
  emu.createObject(deployment('app', 'ns2'));
});
afterAll(() => emu.close());

describe('authentication', () => {
  it('answers 401 Unauthorized for a missing or unknown token', async () => {
    for (const token of [null, 'nope']) {
      const res = await call(emu, 'GET', '/api/v1/namespaces/ns1/secrets/identity', { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
    }
    expect(emu.requests.filter((r) => r.status === 401).every((r) => r.user === '')).toBe(true);
  });

  it('lets /version and /healthz through without a token, discovery with any valid one', async () => {
    expect((await call(emu, 'GET', '/version', { token: null })).status).toBe(200);
    expect((await call(emu, 'GET', '/healthz', { token: null })).body).toBe('ok');
    expect((await call(emu, 'GET', '/api', { token: null })).status).toBe(401);
    expect((await call(emu, 'GET', '/api/v1', { token: 'sa-token' })).status).toBe(200);
    expect((await call(emu, 'GET', '/apis/apps/v1', { token: 'sa-token' })).status).toBe(200);
  });
});

describe('RBAC with resourceNames', () => {
  it('allows get and update of the named Secret only', async () => {
    const core = kubeConfigFor(emu, 'sa-token').makeApiClient(CoreV1Api);
    const s = await core.readNamespacedSecret({ name: 'identity', namespace: 'ns1' });
    s.data = { k: 'bmV3' };
    await core.replaceNamespacedSecret({ name: 'identity', namespace: 'ns1', body: s });
    const denied = await call(emu, 'PUT', '/api/v1/namespaces/ns1/secrets/unrelated', {
      token: 'sa-token',
      body: secret('unrelated', 'ns1'),
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `secrets "unrelated" is forbidden: User "${SA}" cannot update resource "secrets" in API group "" in the namespace "ns1"`,
      reason: 'Forbidden',
      details: { name: 'unrelated', kind: 'secrets' },
      code: 403,
    });
  });

  it('is confined to the grant namespace', async () => {
    const res = await call(emu, 'GET', '/api/v1/namespaces/ns2/secrets/identity', { token: 'sa-token' });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(
      `secrets "identity" is forbidden: User "${SA}" cannot get resource "secrets" in API group "" in the namespace "ns2"`,
    );
  });

  it('authorizes list/watch with a metadata.name field selector by that name, and forbids them without it', async () => {
    const ok = await call(emu, 'GET', '/api/v1/namespaces/ns1/secrets?fieldSelector=metadata.name%3Didentity', { token: 'sa-token' });
    expect(ok.status).toBe(200);
    expect(ok.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['identity']);
    const all = await call(emu, 'GET', '/api/v1/namespaces/ns1/secrets', { token: 'sa-token' });
    expect(all.status).toBe(403);
    expect(all.body.message).toBe(
      `secrets is forbidden: User "${SA}" cannot list resource "secrets" in API group "" in the namespace "ns1"`,
    );
    expect(all.body.details).toEqual({ kind: 'secrets' });
    const other = await call(emu, 'GET', '/api/v1/namespaces/ns1/secrets?fieldSelector=metadata.name%3Dunrelated', { token: 'sa-token' });
    expect(other.status).toBe(403);
    expect(other.body.message).toBe(
      `secrets "unrelated" is forbidden: User "${SA}" cannot list resource "secrets" in API group "" in the namespace "ns1"`,
    );
    const watchAll = await call(emu, 'GET', '/api/v1/namespaces/ns1/secrets?watch=1', { token: 'sa-token' });
    expect(watchAll.status).toBe(403);
    expect(watchAll.body.message).toContain('cannot watch resource "secrets"');
  });

  it('lets a resourceNames-restricted informer work through a fieldSelector', async () => {
    const kc = kubeConfigFor(emu, 'sa-token');
    const core = kc.makeApiClient(CoreV1Api);
    const fieldSelector = 'metadata.name=identity';
    const lw = new ListWatch<V1Secret>(
      '/api/v1/namespaces/ns1/secrets',
      new Watch(kc),
      () => core.listNamespacedSecret({ namespace: 'ns1', fieldSelector }),
      false,
      undefined,
      fieldSelector,
    );
    const errors: unknown[] = [];
    lw.on('error', (e) => errors.push(e));
    await lw.start();
    expect(lw.list('ns1').map((s) => s.metadata?.name)).toEqual(['identity']);
    const deadline = Date.now() + 3000;
    while (emu.openWatches === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(emu.openWatches).toBe(1);
    expect(errors).toEqual([]);
    await lw.stop();
  });

  it('never matches create against resourceNames (the name is not part of a create request)', async () => {
    const res = await call(emu, 'POST', '/api/v1/namespaces/ns1/secrets', { token: 'creator', body: secret('identity', 'ns1') });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(
      'secrets is forbidden: User "creator" cannot create resource "secrets" in API group "" in the namespace "ns1"',
    );
    const core = kubeConfigFor(emu, 'creator').makeApiClient(CoreV1Api);
    const err = await core.createNamespacedSecret({ namespace: 'ns1', body: secret('identity', 'ns1') as V1Secret }).catch((e) => e);
    expect(err.code).toBe(403);
    expect(parseErrorBody(err).reason).toBe('Forbidden');
  });
});

describe('RBAC scopes and subresources', () => {
  it('applies cluster-wide grants, including to a named cluster-scoped object', async () => {
    expect((await call(emu, 'GET', '/api/v1/namespaces/kube-system', { token: 'cluster-reader' })).status).toBe(200);
    const other = await call(emu, 'GET', '/api/v1/namespaces/default', { token: 'cluster-reader' });
    expect(other.status).toBe(403);
    // For GET /api/v1/namespaces/{name} the apiserver takes {name} as the request namespace too.
    expect(other.body.message).toBe(
      'namespaces "default" is forbidden: User "reader" cannot get resource "namespaces" in API group "" in the namespace "default"',
    );
    const nodes = await call(emu, 'GET', '/api/v1/nodes', { token: 'cluster-reader' });
    expect(nodes.body.message).toBe('nodes is forbidden: User "reader" cannot list resource "nodes" in API group "" at the cluster scope');
    expect((await call(emu, 'GET', '/apis/apps/v1/deployments', { token: 'cluster-reader' })).status).toBe(200);
  });

  it('treats deployments/status as its own resource', async () => {
    const patch = { body: { status: { replicas: 1 } }, contentType: 'application/merge-patch+json', token: 'cluster-reader' };
    expect((await call(emu, 'PATCH', '/apis/apps/v1/namespaces/ns2/deployments/app/status', patch)).status).toBe(200);
    const main = await call(emu, 'PATCH', '/apis/apps/v1/namespaces/ns2/deployments/app', patch);
    expect(main.status).toBe(403);
    expect(main.body.message).toBe(
      'deployments.apps "app" is forbidden: User "reader" cannot patch resource "deployments" in API group "apps" in the namespace "ns2"',
    );
    expect(main.body.details).toEqual({ name: 'app', group: 'apps', kind: 'deployments' });
    const cur = emu.getObject('apps/v1', 'Deployment', 'ns2', 'app')!;
    expect(
      (await call(emu, 'PUT', '/apis/apps/v1/namespaces/ns2/deployments/app/status', { token: 'status-only', body: cur })).status,
    ).toBe(200);
    const denied = await call(emu, 'PUT', '/apis/apps/v1/namespaces/ns2/deployments/app', { token: 'status-only', body: cur });
    expect(denied.status).toBe(403);
    const podStatus = await call(emu, 'PATCH', '/api/v1/namespaces/ns2/pods/x/status', {
      token: 'status-only',
      body: {},
      contentType: 'application/merge-patch+json',
    });
    expect(podStatus.body.message).toContain('cannot patch resource "pods/status" in API group ""');
  });

  it('honours wildcards within the grant namespace only', async () => {
    expect((await call(emu, 'GET', '/api/v1/namespaces/ns2/secrets', { token: 'wild' })).status).toBe(200);
    expect((await call(emu, 'DELETE', '/api/v1/namespaces/ns2/secrets/elsewhere', { token: 'wild' })).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/namespaces/ns1/secrets', { token: 'wild' })).status).toBe(403);
    expect((await call(emu, 'GET', '/api/v1/secrets', { token: 'wild' })).status).toBe(403);
  });

  it('authorizes dryRun requests like real ones', async () => {
    const res = await call(emu, 'DELETE', '/api/v1/namespaces/ns1/secrets/unrelated?dryRun=All', { token: 'sa-token' });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('cannot delete resource "secrets"');
  });

  it('records the user of each request', () => {
    expect(emu.requests.some((r) => r.user === SA && r.verb === 'update' && r.name === 'identity' && r.status === 200)).toBe(true);
    expect(emu.requests.some((r) => r.user === 'creator' && r.verb === 'create' && r.status === 403)).toBe(true);
  });
});

describe('self reviews', () => {
  it('answers SelfSubjectAccessReview with the authorizer decision, for any authenticated user', async () => {
    const ask = (resourceAttributes: Record<string, string>) =>
      call(emu, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        token: 'sa-token',
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes } },
      });
    const yes = await ask({ namespace: 'ns1', verb: 'update', resource: 'secrets', name: 'identity' });
    expect(yes.status).toBe(201);
    expect(yes.body.status.allowed).toBe(true);
    expect((await ask({ namespace: 'ns1', verb: 'update', resource: 'secrets', name: 'unrelated' })).body.status.allowed).toBe(false);
    expect((await ask({ namespace: 'ns1', verb: 'create', resource: 'secrets', name: 'identity' })).body.status.allowed).toBe(false);
    // The authorizer itself matches resourceNames for any verb; only a real create request carries no name.
    const creator = await call(emu, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      token: 'creator',
      body: { spec: { resourceAttributes: { namespace: 'ns1', verb: 'create', resource: 'secrets', name: 'identity' } } },
    });
    expect(creator.body.status.allowed).toBe(true);
    expect((await ask({ namespace: 'ns1', verb: 'list', resource: 'secrets' })).body.status.allowed).toBe(false);
    const rules = await call(emu, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      token: 'sa-token',
      body: { spec: { namespace: 'ns1' } },
    });
    expect(rules.body.status.resourceRules).toContainEqual({
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: ['identity'],
      verbs: ['get', 'list', 'watch', 'update', 'patch'],
    });
    const get = await call(emu, 'GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    expect(get.status).toBe(405);
  });
});
