import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { KubeEmulator } from '../../emulators/kube/index.js';
import { whoami } from './access-review.js';
import { call, secret, startSeeded } from './kube-helpers.js';
import { type KubectlRun, kubectlIn, kubectlPath, kubectlRequired } from './kubectl-runner.js';

// TokenRequest (serviceaccounts/{name}/token) as the apiserver serves it, and the tokens it
// issues: they authenticate as the ServiceAccount and are authorized by stored RBAC alone.

const NS = 'ns1';
const SA_USER = `system:serviceaccount:${NS}:runner`;

const rbac = [
  'apiVersion: v1',
  'kind: ServiceAccount',
  `metadata: {name: runner, namespace: ${NS}}`,
  '---',
  'apiVersion: v1',
  'kind: ServiceAccount',
  `metadata: {name: idle, namespace: ${NS}}`,
  '---',
  'apiVersion: rbac.authorization.k8s.io/v1',
  'kind: Role',
  `metadata: {name: identity-reader, namespace: ${NS}}`,
  'rules: [{apiGroups: [""], resources: [secrets], resourceNames: [identity], verbs: [get, list, watch]}]',
  '---',
  'apiVersion: rbac.authorization.k8s.io/v1',
  'kind: RoleBinding',
  `metadata: {name: identity-reader, namespace: ${NS}}`,
  'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: identity-reader}',
  `subjects: [{kind: ServiceAccount, name: runner, namespace: ${NS}}]`,
  '---',
  // A group subject: every service account of ns1 may read ConfigMaps there.
  'apiVersion: rbac.authorization.k8s.io/v1',
  'kind: ClusterRole',
  'metadata: {name: configmap-reader}',
  'rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]',
  '---',
  'apiVersion: rbac.authorization.k8s.io/v1',
  'kind: RoleBinding',
  `metadata: {name: configmap-reader, namespace: ${NS}}`,
  'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: configmap-reader}',
  `subjects: [{kind: Group, apiGroup: rbac.authorization.k8s.io, name: "system:serviceaccounts:${NS}"}]`,
  '',
].join('\n');

function expectOk(run: KubectlRun): string {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout;
}

describe.skipIf(!kubectlPath && !kubectlRequired)('TokenRequest (JSON, through kubectl create --raw) against the emulator', () => {
  let emu: KubeEmulator;
  let dir: string;
  let admin: ReturnType<typeof kubectlIn>;
  /** kubectl with a kubeconfig carrying `token`. */
  const as = async (token: string) => {
    const cfg = join(dir, `${token.slice(0, 12)}.yaml`);
    await emu.writeKubeconfig(cfg, { token, namespace: NS });
    return kubectlIn(dir, cfg);
  };

  /**
   * A TokenRequest in JSON: `kubectl create token` sends protobuf, which the emulator does not speak
   * (docs/emulators.md). The run, whose stdout is the TokenRequest with its status.token.
   */
  const requestToken = (name: string, expirationSeconds = 3600) =>
    admin(
      ['create', '--raw', `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`, '-f', '-'],
      JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } }),
    );
  const tokenOf = async (name: string) => (JSON.parse(expectOk(await requestToken(name))) as { status: { token: string } }).status.token;
  const serviceAccount = (name: string) => `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ${name}, namespace: ${NS}}\n`;

  beforeAll(async () => {
    expect(kubectlPath, 'kubectl must be on PATH when CI=true').toBeTruthy();
    emu = await startSeeded();
    emu.createObject(secret('identity', NS));
    emu.createObject(secret('other', NS));
    emu.createObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-id', namespace: NS }, data: { id: 'x' } });
    dir = await mkdtemp(join(tmpdir(), 'kube-token-request-'));
    const cfg = join(dir, 'admin.yaml');
    await emu.writeKubeconfig(cfg, { namespace: NS });
    admin = kubectlIn(dir, cfg);
    expectOk(await admin(['apply', '-f', '-'], rbac));
  });
  afterAll(async () => {
    await emu?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('issues a token that is the ServiceAccount, with its groups', async () => {
    const token = await tokenOf('runner');
    expect(token).toMatch(/^\S{20,}$/);
    expect(await whoami(await as(token))).toEqual({
      username: SA_USER,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
    });
    const create = emu.requests.find((r) => r.resource === 'serviceaccounts' && r.subresource === 'token');
    expect(create).toMatchObject({ method: 'POST', verb: 'create', namespace: NS, name: 'runner', status: 201 });
  });

  it('authorizes the token by its RoleBinding only: the named Secret, by name or field selector', async () => {
    const kubectl = await as(await tokenOf('runner'));
    const got = JSON.parse(expectOk(await kubectl(['get', 'secret', 'identity', '-o', 'json'])));
    expect(got.metadata.name).toBe('identity');
    const other = await kubectl(['get', 'secret', 'other']);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain(
      `Error from server (Forbidden): secrets "other" is forbidden: User "${SA_USER}" cannot get resource "secrets" in API group "" in the namespace "${NS}"`,
    );
    const list = await kubectl(['get', 'secrets']);
    expect(list.code).not.toBe(0);
    expect(list.stderr).toContain(
      `secrets is forbidden: User "${SA_USER}" cannot list resource "secrets" in API group "" in the namespace "${NS}"`,
    );
    const selected = expectOk(await kubectl(['get', 'secrets', '--field-selector', 'metadata.name=identity', '-o', 'name']));
    expect(selected.trim()).toBe('secret/identity');
    // The Group subject system:serviceaccounts:ns1 (through a RoleBinding to a ClusterRole).
    expect(expectOk(await kubectl(['get', 'configmap', 'cluster-id', '-o', 'name'])).trim()).toBe('configmap/cluster-id');
    const elsewhere = await kubectl(['get', 'secret', 'identity', '-n', 'ns2']);
    expect(elsewhere.stderr).toContain(`cannot get resource "secrets" in API group "" in the namespace "ns2"`);
  });

  it('gives another ServiceAccount of the namespace only what its groups are bound to', async () => {
    const kubectl = await as(await tokenOf('idle'));
    const denied = await kubectl(['get', 'secret', 'identity']);
    expect(denied.stderr).toContain(`User "system:serviceaccount:${NS}:idle" cannot get resource "secrets"`);
    expect(expectOk(await kubectl(['get', 'configmap', 'cluster-id', '-o', 'name'])).trim()).toBe('configmap/cluster-id');
  });

  it('refuses a duration under 10 minutes (422) and a missing ServiceAccount (404)', async () => {
    const short = await requestToken('runner', 100);
    expect(short.code).not.toBe(0);
    expect(short.stderr).toContain(
      'TokenRequest "" is invalid: spec.expirationSeconds: Invalid value: 100: may not specify a duration less than 10 minutes',
    );
    expect(emu.requests.at(-1)).toMatchObject({ subresource: 'token', status: 422 });
    const missing = await requestToken('nobody');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('serviceaccounts "nobody" not found');
  });

  it('stops authenticating the token once its ServiceAccount is deleted', async () => {
    expectOk(await admin(['apply', '-f', '-'], serviceAccount('short-lived')));
    expectOk(
      await admin(
        ['apply', '-f', '-'],
        `apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: short-lived, namespace: ${NS}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: identity-reader}\nsubjects: [{kind: ServiceAccount, name: short-lived, namespace: ${NS}}]\n`,
      ),
    );
    const token = await tokenOf('short-lived');
    const kubectl = await as(token);
    expectOk(await kubectl(['get', 'secret', 'identity', '-o', 'name']));
    expectOk(await admin(['delete', 'serviceaccount', 'short-lived', '-n', NS]));
    const after = await kubectl(['get', 'secret', 'identity']);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain('error: You must be logged in to the server (Unauthorized)');
    expect((await call(emu, 'GET', `/api/v1/namespaces/${NS}/secrets/identity`, { token })).status).toBe(401);
    // A new account of the same name does not bring the old token back.
    expectOk(await admin(['apply', '-f', '-'], serviceAccount('short-lived')));
    expect((await call(emu, 'GET', `/api/v1/namespaces/${NS}/secrets/identity`, { token })).status).toBe(401);
  });
});

describe('TokenRequest over the API', () => {
  let emu: KubeEmulator;
  const tokenPath = (name: string) => `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`;
  const request = (spec: Record<string, unknown> = {}) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec });

  beforeAll(async () => {
    emu = await startSeeded();
    emu.createObject({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'runner', namespace: NS } });
    emu.createObject(secret('identity', NS));
    emu.createObject({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'secret-getter' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
    });
    emu.createObject({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'secret-getter' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'secret-getter' },
      subjects: [{ kind: 'ServiceAccount', name: 'runner', namespace: NS }],
    });
  });
  afterAll(() => emu.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers 201 with the TokenRequest: default audiences, one hour, expirationTimestamp', async () => {
    const before = Date.now();
    const res = await call(emu, 'POST', tokenPath('runner'), { body: request() });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name: 'runner', namespace: NS, creationTimestamp: expect.any(String) },
      spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600, boundObjectRef: null },
      status: { token: expect.any(String), expirationTimestamp: expect.stringMatching(/Z$/) },
    });
    const expiry = Date.parse(res.body.status.expirationTimestamp);
    expect(expiry).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 3600_000);
    const get = await call(emu, 'GET', `/api/v1/namespaces/${NS}/secrets/identity`, { token: res.body.status.token });
    expect(get.status).toBe(200);
  });

  it('answers 422 like the apiserver for a too short or too long expiration', async () => {
    const res = await call(emu, 'POST', tokenPath('runner'), { body: request({ expirationSeconds: 100 }) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 100: may not specify a duration less than 10 minutes',
      reason: 'Invalid',
      details: {
        name: '',
        group: 'authentication.k8s.io',
        kind: 'TokenRequest',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: 100: may not specify a duration less than 10 minutes',
            field: 'spec.expirationSeconds',
          },
        ],
      },
      code: 422,
    });
    const long = await call(emu, 'POST', tokenPath('runner'), { body: request({ expirationSeconds: 2 ** 32 + 1 }) });
    expect(long.body.message).toContain('may not specify a duration larger than 2^32 seconds');
    const mismatch = await call(emu, 'POST', tokenPath('runner'), { body: { ...request(), metadata: { name: 'other' } } });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.message).toBe(
      'TokenRequest.authentication.k8s.io "runner" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified',
    );
  });

  it('answers 404 for a missing ServiceAccount, checked before the expiration', async () => {
    const res = await call(emu, 'POST', tokenPath('nobody'), { body: request({ expirationSeconds: 100 }) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'serviceaccounts "nobody" not found',
      reason: 'NotFound',
      details: { name: 'nobody', kind: 'serviceaccounts' },
      code: 404,
    });
    expect((await call(emu, 'GET', tokenPath('runner'))).status).toBe(405);
  });

  it('authorizes the create verb on serviceaccounts/token through RBAC', async () => {
    const minter = (await call(emu, 'POST', tokenPath('runner'), { body: request() })).body.status.token;
    const denied = await call(emu, 'POST', tokenPath('runner'), { token: minter, body: request() });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      `serviceaccounts "runner" is forbidden: User "${SA_USER}" cannot create resource "serviceaccounts/token" in API group "" in the namespace "${NS}"`,
    );
    emu.createObject({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'mint-own', namespace: NS },
      rules: [{ apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: ['runner'], verbs: ['create'] }],
    });
    emu.createObject({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'mint-own', namespace: NS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'mint-own' },
      subjects: [{ kind: 'ServiceAccount', name: 'runner' }],
    });
    expect((await call(emu, 'POST', tokenPath('runner'), { token: minter, body: request() })).status).toBe(201);
  });

  it('refuses an expired token and one issued for another audience (401)', async () => {
    const token = (await call(emu, 'POST', tokenPath('runner'), { body: request({ expirationSeconds: 600 }) })).body.status.token;
    const path = `/api/v1/namespaces/${NS}/secrets/identity`;
    expect((await call(emu, 'GET', path, { token })).status).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 599_000);
    expect((await call(emu, 'GET', path, { token })).status).toBe(200);
    vi.setSystemTime(Date.now() + 2_000);
    expect((await call(emu, 'GET', path, { token })).status).toBe(401);
    vi.useRealTimers();
    const foreign = await call(emu, 'POST', tokenPath('runner'), { body: request({ audiences: ['vault'] }) });
    expect(foreign.body.spec.audiences).toEqual(['vault']);
    expect((await call(emu, 'GET', path, { token: foreign.body.status.token })).status).toBe(401);
  });

  it('binds a token to a Secret: it ends with the Secret', async () => {
    const bound = emu.createObject(secret('binding', NS));
    const ref = { apiVersion: 'v1', kind: 'Secret', name: 'binding', uid: bound.metadata.uid };
    const res = await call(emu, 'POST', tokenPath('runner'), { body: request({ boundObjectRef: ref }) });
    expect(res.status).toBe(201);
    expect(res.body.spec.boundObjectRef).toEqual(ref);
    const path = `/api/v1/namespaces/${NS}/secrets/identity`;
    expect((await call(emu, 'GET', path, { token: res.body.status.token })).status).toBe(200);
    emu.deleteObject('v1', 'Secret', NS, 'binding');
    expect((await call(emu, 'GET', path, { token: res.body.status.token })).status).toBe(401);
    const wrongKind = await call(emu, 'POST', tokenPath('runner'), {
      body: request({ boundObjectRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x' } }),
    });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.message).toBe('cannot bind token to object of type /v1, Kind=ConfigMap');
  });

  it('lists serviceaccounts/token in discovery', async () => {
    const res = await call(emu, 'GET', '/api/v1');
    expect(res.body.resources).toContainEqual({
      name: 'serviceaccounts/token',
      singularName: '',
      namespaced: true,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
  });
});
