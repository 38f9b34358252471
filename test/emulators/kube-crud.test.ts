import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeEmulator } from '../../emulators/kube/index.js';
import { call, deployment, type Wire, kubeConfigFor, parseErrorBody, secret, startSeeded } from './kube-helpers.js';

let emu: KubeEmulator;
let core: CoreV1Api;
let apps: AppsV1Api;

beforeAll(async () => {
  emu = await startSeeded();
  const kc = kubeConfigFor(emu);
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
});
afterAll(() => emu.close());

async function failureOf(p: Promise<unknown>): Promise<{ code: number; body: Wire }> {
  try {
    await p;
  } catch (e) {
    return { code: (e as { code: number }).code, body: parseErrorBody(e) };
  }
  throw new Error('expected the call to fail');
}

describe('objects and metadata', () => {
  it('creates, reads, lists, updates and deletes a Secret through client-node', async () => {
    const created = await core.createNamespacedSecret({ namespace: 'default', body: secret('crud-a') as V1Secret });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0);
    expect(created.type).toBe('Opaque');

    const read = await core.readNamespacedSecret({ name: 'crud-a', namespace: 'default' });
    expect(read.data).toEqual({ k: 'dg==' });
    expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);

    read.data = { k: 'dzI=' };
    const updated = await core.replaceNamespacedSecret({ name: 'crud-a', namespace: 'default', body: read });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));
    expect(updated.metadata?.uid).toBe(created.metadata?.uid);

    const list = await core.listNamespacedSecret({ namespace: 'default' });
    expect(list.items.map((s) => s.metadata?.name)).toContain('crud-a');
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(updated.metadata?.resourceVersion));

    await core.deleteNamespacedSecret({ name: 'crud-a', namespace: 'default' });
    expect(emu.getObject('v1', 'Secret', 'default', 'crud-a')).toBeUndefined();
  });

  it('uses one global, increasing resourceVersion across kinds', async () => {
    const a = emu.createObject(secret('rv-a'));
    const cm = emu.createObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rv-b', namespace: 'default' },
      data: { x: 'y' },
    });
    const b = emu.updateObject({ ...a, data: { k: 'eA==' } });
    expect(Number(cm.metadata.resourceVersion)).toBe(Number(a.metadata.resourceVersion) + 1);
    expect(Number(b.metadata.resourceVersion)).toBe(Number(cm.metadata.resourceVersion) + 1);
    expect(emu.resourceVersion).toBe(b.metadata.resourceVersion);
  });

  it('answers list and get with kind/apiVersion set as the apiserver does', async () => {
    emu.createObject(secret('shape-a', 'ns1'));
    const list = await call(emu, 'GET', '/api/v1/namespaces/ns1/secrets');
    expect(list.body.kind).toBe('SecretList');
    expect(list.body.apiVersion).toBe('v1');
    expect(list.body.metadata.resourceVersion).toBe(emu.resourceVersion);
    expect(list.body.items[0].kind).toBeUndefined();
    expect(list.body.items[0].metadata.name).toBe('shape-a');
    const one = await call(emu, 'GET', '/api/v1/namespaces/ns1/secrets/shape-a');
    expect(one.body.kind).toBe('Secret');
    expect(one.body.apiVersion).toBe('v1');
    const deps = await call(emu, 'GET', '/apis/apps/v1/deployments');
    expect(deps.body.kind).toBe('DeploymentList');
    expect(deps.body.apiVersion).toBe('apps/v1');
  });

  it('supports generateName', async () => {
    const created = await core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { generateName: 'gen-' }, data: {} } as V1Secret,
    });
    expect(created.metadata?.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(created.metadata?.generateName).toBe('gen-');
  });

  it('folds stringData into data and never stores stringData', async () => {
    const created = await core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'sd' }, data: { a: 'b2xk', b: 'a2VlcA==' }, stringData: { a: 'new', c: 'plain' } } as V1Secret,
    });
    expect(created.data).toEqual({ a: Buffer.from('new').toString('base64'), b: 'a2VlcA==', c: Buffer.from('plain').toString('base64') });
    expect(created.stringData).toBeUndefined();
    expect(emu.getObject('v1', 'Secret', 'default', 'sd')?.['stringData']).toBeUndefined();
  });

  it('tracks generation on spec changes only', async () => {
    const d = await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('gen') as never });
    expect(d.metadata?.generation).toBe(1);
    expect(d.spec?.replicas).toBe(2);

    const labelled = await apps.patchNamespacedDeployment(
      { name: 'gen', namespace: 'default', body: { metadata: { labels: { extra: 'yes' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(labelled.metadata?.generation).toBe(1);
    expect(Number(labelled.metadata?.resourceVersion)).toBeGreaterThan(Number(d.metadata?.resourceVersion));

    const status = await apps.patchNamespacedDeploymentStatus(
      { name: 'gen', namespace: 'default', body: { status: { replicas: 2, observedGeneration: 1 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(status.metadata?.generation).toBe(1);
    expect(status.status?.replicas).toBe(2);

    const scaled = await apps.patchNamespacedDeployment(
      { name: 'gen', namespace: 'default', body: { spec: { replicas: 3 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(scaled.metadata?.generation).toBe(2);
    // The main resource keeps the stored status.
    expect(scaled.status?.replicas).toBe(2);
  });

  it('resets status on create and ignores status on main-resource PUT for kinds with a status subresource', async () => {
    const body = { ...deployment('st'), status: { replicas: 9 } };
    const created = await call(emu, 'POST', '/apis/apps/v1/namespaces/default/deployments', { body });
    expect(created.status).toBe(201);
    expect(created.body.status).toEqual({});
    const put = await call(emu, 'PUT', '/apis/apps/v1/namespaces/default/deployments/st', {
      body: { ...created.body, status: { replicas: 5 } },
    });
    expect(put.status).toBe(200);
    expect(put.body.status).toEqual({});
    // Nothing changed → the apiserver does not write: same resourceVersion.
    expect(put.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);

    const statusPut = await call(emu, 'PUT', '/apis/apps/v1/namespaces/default/deployments/st/status', {
      body: {
        ...put.body,
        spec: { ...put.body.spec, replicas: 7 },
        metadata: { ...put.body.metadata, labels: { changed: 'x' } },
        status: { replicas: 5 },
      },
    });
    expect(statusPut.status).toBe(200);
    expect(statusPut.body.status).toEqual({ replicas: 5 });
    expect(statusPut.body.spec.replicas).toBe(2);
    expect(statusPut.body.metadata.labels).toEqual({ app: 'st' });
    expect(statusPut.body.metadata.generation).toBe(1);
  });

  it('keeps uid and creationTimestamp on update whatever the client sends', async () => {
    const s = emu.createObject(secret('sys'));
    const res = await call(emu, 'PUT', '/api/v1/namespaces/default/secrets/sys', {
      body: { ...s, metadata: { ...s.metadata, creationTimestamp: '2000-01-01T00:00:00Z' }, data: { z: 'eg==' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.metadata.creationTimestamp).toBe(s.metadata.creationTimestamp);
    const uidClash = await call(emu, 'PUT', '/api/v1/namespaces/default/secrets/sys', {
      body: { ...res.body, metadata: { ...res.body.metadata, uid: 'other-uid' } },
    });
    expect(uidClash.status).toBe(409);
    expect(uidClash.body.message).toBe(
      `Operation cannot be fulfilled on secrets "sys": Precondition failed: UID in precondition: other-uid, UID in object meta: ${s.metadata.uid}`,
    );
  });

  it('seeds kube-system with a uid usable as a cluster id', async () => {
    const ns = await core.readNamespace({ name: 'kube-system' });
    expect(ns.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(ns.status?.phase).toBe('Active');
    expect(ns.metadata?.labels?.['kubernetes.io/metadata.name']).toBe('kube-system');
  });

  it('deletes a namespace with its contents and answers with the namespace object', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    emu.createObject(secret('inside', 'doomed'));
    const res = await call(emu, 'DELETE', '/api/v1/namespaces/doomed');
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe('Namespace');
    expect(emu.listObjects('v1', 'Secret', 'doomed')).toEqual([]);
    const create = await call(emu, 'POST', '/api/v1/namespaces/doomed/secrets', { body: secret('late', 'doomed') });
    expect(create.status).toBe(404);
    expect(create.body.message).toBe('namespaces "doomed" not found');
  });
});

describe('extension points', () => {
  it('reports every committed change to onChange listeners, with the previous state', () => {
    const events: Array<[string, string, string | undefined, string | undefined]> = [];
    const off = emu.onChange((e) => events.push([e.type, e.kindKey, e.object.metadata.resourceVersion, e.prev?.metadata.resourceVersion]));
    const a = emu.createObject(secret('chg'));
    const b = emu.updateObject({ ...a, data: { k: 'Yg==' } });
    emu.updateObject(b);
    emu.deleteObject('v1', 'Secret', 'default', 'chg');
    off();
    emu.createObject(secret('chg-after'));
    expect(events).toEqual([
      ['ADDED', 'v1/Secret', a.metadata.resourceVersion, undefined],
      ['MODIFIED', 'v1/Secret', b.metadata.resourceVersion, a.metadata.resourceVersion],
      ['DELETED', 'v1/Secret', String(Number(b.metadata.resourceVersion) + 1), b.metadata.resourceVersion],
    ]);
  });

  it('serves a newly registered kind through discovery, CRUD and watch', async () => {
    emu.kinds.register({
      group: 'example.com',
      version: 'v1',
      kind: 'Widget',
      plural: 'widgets',
      namespaced: true,
      hasStatus: true,
      tracksGeneration: true,
    });
    const created = await call(emu, 'POST', '/apis/example.com/v1/namespaces/ns1/widgets', {
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } },
    });
    expect(created.status).toBe(201);
    expect(created.body.metadata.generation).toBe(1);
    const list = await call(emu, 'GET', '/apis/example.com/v1/widgets');
    expect(list.body.kind).toBe('WidgetList');
    expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['w1']);
    const resources = await call(emu, 'GET', '/apis/example.com/v1');
    expect(resources.body.resources.map((r: { name: string }) => r.name)).toEqual(['widgets', 'widgets/status']);
    expect(emu.getObject('example.com/v1', 'Widget', 'ns1', 'w1')?.['spec']).toEqual({ size: 1 });
  });
});

describe('error Status shapes', () => {
  it('404 NotFound', async () => {
    const { code, body } = await failureOf(core.readNamespacedSecret({ name: 'missing', namespace: 'default' }));
    expect(code).toBe(404);
    expect(body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'secrets "missing" not found',
      reason: 'NotFound',
      details: { name: 'missing', kind: 'secrets' },
      code: 404,
    });
    const dep = await call(emu, 'GET', '/apis/apps/v1/namespaces/default/deployments/nope');
    expect(dep.body.message).toBe('deployments.apps "nope" not found');
    expect(dep.body.details).toEqual({ name: 'nope', group: 'apps', kind: 'deployments' });
  });

  it('409 AlreadyExists', async () => {
    emu.createObject(secret('dup'));
    const { code, body } = await failureOf(core.createNamespacedSecret({ namespace: 'default', body: secret('dup') as V1Secret }));
    expect(code).toBe(409);
    expect(body.reason).toBe('AlreadyExists');
    expect(body.message).toBe('secrets "dup" already exists');
    expect(body.details).toEqual({ name: 'dup', kind: 'secrets' });
  });

  it('409 Conflict on a stale resourceVersion, and unconditional update without one', async () => {
    const s = emu.createObject(secret('stale'));
    emu.updateObject({ ...s, data: { k: 'bmV3' } });
    const { code, body } = await failureOf(
      core.replaceNamespacedSecret({ name: 'stale', namespace: 'default', body: { ...s, data: { k: 'bG9zdA==' } } as V1Secret }),
    );
    expect(code).toBe(409);
    expect(body.reason).toBe('Conflict');
    expect(body.message).toBe(
      'Operation cannot be fulfilled on secrets "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(body.details).toEqual({ name: 'stale', kind: 'secrets' });
    const unconditional = await core.replaceNamespacedSecret({
      name: 'stale',
      namespace: 'default',
      body: { metadata: { name: 'stale' }, data: { k: 'Zm9yY2U=' } } as V1Secret,
    });
    expect(unconditional.data).toEqual({ k: 'Zm9yY2U=' });
  });

  it('422 Invalid with causes', async () => {
    const res = await call(emu, 'POST', '/api/v1/namespaces/default/secrets', { body: secret('Bad_Name') });
    expect(res.status).toBe(422);
    expect(res.body.reason).toBe('Invalid');
    expect(res.body.details.kind).toBe('Secret');
    expect(res.body.details.name).toBe('Bad_Name');
    expect(res.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });
    expect(res.body.message).toMatch(
      /^Secret "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );

    const noName = await call(emu, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: {} } });
    expect(noName.status).toBe(422);
    expect(noName.body.message).toBe('ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required');

    const badKey = await call(emu, 'POST', '/api/v1/namespaces/default/secrets', { body: secret('badkey', 'default', { 'a b': 'eA==' }) });
    expect(badKey.status).toBe(422);
    expect(badKey.body.details.causes[0].field).toBe('data[a b]');
  });

  it('rejects bad base64 in Secret data while decoding (400, as the apiserver does)', async () => {
    const res = await call(emu, 'POST', '/api/v1/namespaces/default/secrets', { body: secret('b64', 'default', { k: 'not base64!' }) });
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe('BadRequest');
    expect(res.body.message).toBe('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3');
    const missingPad = await call(emu, 'POST', '/api/v1/namespaces/default/secrets', { body: secret('b64', 'default', { k: 'YWJjZA' }) });
    expect(missingPad.status).toBe(400);
    expect(missingPad.body.message).toContain('illegal base64 data at input byte 4');
    expect(emu.getObject('v1', 'Secret', 'default', 'b64')).toBeUndefined();
  });

  it('400 for namespace and name mismatches, 500 for a create carrying resourceVersion', async () => {
    const ns = await call(emu, 'POST', '/api/v1/namespaces/default/secrets', { body: secret('mm', 'ns1') });
    expect(ns.status).toBe(400);
    expect(ns.body.message).toBe('the namespace of the provided object does not match the namespace sent on the request');
    emu.createObject(secret('nm'));
    const name = await call(emu, 'PUT', '/api/v1/namespaces/default/secrets/nm', { body: secret('other') });
    expect(name.status).toBe(400);
    expect(name.body.message).toBe('the name of the object (other) does not match the name on the URL (nm)');
    const rv = await call(emu, 'POST', '/api/v1/namespaces/default/secrets', {
      body: { ...secret('withrv'), metadata: { name: 'withrv', resourceVersion: '5' } },
    });
    expect(rv.status).toBe(500);
    expect(rv.body.message).toBe('resourceVersion should not be set on objects to be created');
  });

  it('immutable Secrets refuse data changes', async () => {
    emu.createObject({ ...secret('imm'), immutable: true });
    const cur = emu.getObject('v1', 'Secret', 'default', 'imm')!;
    const res = await call(emu, 'PUT', '/api/v1/namespaces/default/secrets/imm', { body: { ...cur, data: { k: 'eHg=' } } });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('data: Forbidden: field is immutable when `immutable` is set');
  });
});

describe('field validation', () => {
  it('rejects unknown fields under Strict and reports them under Warn', async () => {
    const body = { ...secret('fv'), stringdata: { a: 'b' }, metadata: { name: 'fv', labelz: {} } };
    const strict = await call(emu, 'POST', '/api/v1/namespaces/default/secrets?fieldValidation=Strict', { body });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'Secret in version "v1" cannot be handled as a Secret: strict decoding error: unknown field "stringdata", unknown field "metadata.labelz"',
    );
    const warn = await call(emu, 'POST', '/api/v1/namespaces/default/secrets', { body });
    expect(warn.status).toBe(201);
    expect(warn.body.stringdata).toBeUndefined();
    expect(warn.warning).toBe('299 - "unknown field \\"stringdata\\"", 299 - "unknown field \\"metadata.labelz\\""');
  });
});

describe('dryRun', () => {
  it('validates and authorizes but stores nothing on create/update/patch/delete', async () => {
    const rv0 = emu.resourceVersion;
    const created = await call(emu, 'POST', '/api/v1/namespaces/default/secrets?dryRun=All', { body: secret('dry') });
    expect(created.status).toBe(201);
    expect(created.body.metadata.uid).toBeTruthy();
    expect(created.body.metadata.resourceVersion).toBeUndefined();
    expect(emu.getObject('v1', 'Secret', 'default', 'dry')).toBeUndefined();
    const invalid = await call(emu, 'POST', '/api/v1/namespaces/default/secrets?dryRun=All', { body: secret('Dry!') });
    expect(invalid.status).toBe(422);
    expect(emu.resourceVersion).toBe(rv0);

    const real = emu.createObject(secret('dry2'));
    const rv1 = emu.resourceVersion;
    const upd = await call(emu, 'PUT', '/api/v1/namespaces/default/secrets/dry2?dryRun=All', { body: { ...real, data: { k: 'ZHJ5' } } });
    expect(upd.status).toBe(200);
    expect(upd.body.data).toEqual({ k: 'ZHJ5' });
    expect(upd.body.metadata.resourceVersion).toBe(real.metadata.resourceVersion);
    const patched = await call(emu, 'PATCH', '/api/v1/namespaces/default/secrets/dry2?dryRun=All', {
      body: { metadata: { labels: { a: 'b' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.body.metadata.labels).toEqual({ a: 'b' });
    const del = await call(emu, 'DELETE', '/api/v1/namespaces/default/secrets/dry2', { body: { dryRun: ['All'] } });
    expect(del.status).toBe(200);
    expect(emu.getObject('v1', 'Secret', 'default', 'dry2')?.data).toEqual({ k: 'dg==' });
    expect(emu.resourceVersion).toBe(rv1);
  });
});

describe('delete', () => {
  it('answers with a Success Status for secrets and the object for pods', async () => {
    const s = emu.createObject(secret('del-a'));
    const res = await call(emu, 'DELETE', '/api/v1/namespaces/default/secrets/del-a');
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'del-a', kind: 'secrets', uid: s.metadata.uid },
    });
    emu.createObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const pod = await call(emu, 'DELETE', '/api/v1/namespaces/default/pods/p');
    expect(pod.body.kind).toBe('Pod');
    expect(pod.body.metadata.name).toBe('p');
  });

  it('checks uid and resourceVersion preconditions', async () => {
    const s = emu.createObject(secret('pre'));
    const uid = await call(emu, 'DELETE', '/api/v1/namespaces/default/secrets/pre', { body: { preconditions: { uid: 'abc' } } });
    expect(uid.status).toBe(409);
    expect(uid.body.reason).toBe('Conflict');
    expect(uid.body.message).toBe(
      `Operation cannot be fulfilled on secrets "pre": Precondition failed: UID in precondition: abc, UID in object meta: ${s.metadata.uid}`,
    );
    const rv = await call(emu, 'DELETE', '/api/v1/namespaces/default/secrets/pre?preconditions.resourceVersion=1');
    expect(rv.status).toBe(409);
    expect(rv.body.message).toContain(
      `Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${s.metadata.resourceVersion}`,
    );
    await core.deleteNamespacedSecret({
      name: 'pre',
      namespace: 'default',
      body: { preconditions: { uid: s.metadata.uid, resourceVersion: s.metadata.resourceVersion } },
    });
    expect(emu.getObject('v1', 'Secret', 'default', 'pre')).toBeUndefined();
  });

  it('holds objects with finalizers until the last one is removed', async () => {
    emu.createObject({ ...secret('fin'), metadata: { name: 'fin', namespace: 'default', finalizers: ['example.com/hold'] } });
    const res = await call(emu, 'DELETE', '/api/v1/namespaces/default/secrets/fin');
    expect(res.status).toBe(200);
    expect(res.body.metadata.deletionTimestamp).toBeTruthy();
    const held = emu.getObject('v1', 'Secret', 'default', 'fin')!;
    expect(held.metadata.deletionTimestamp).toBeTruthy();
    await call(emu, 'PATCH', '/api/v1/namespaces/default/secrets/fin', {
      body: [{ op: 'remove', path: '/metadata/finalizers' }],
      contentType: 'application/json-patch+json',
    });
    expect(emu.getObject('v1', 'Secret', 'default', 'fin')).toBeUndefined();
  });

  it('deletes a collection by label selector', async () => {
    emu.createObject({ ...secret('dc-1', 'ns2'), metadata: { name: 'dc-1', namespace: 'ns2', labels: { batch: 'x' } } });
    emu.createObject({ ...secret('dc-2', 'ns2'), metadata: { name: 'dc-2', namespace: 'ns2', labels: { batch: 'x' } } });
    emu.createObject({ ...secret('dc-3', 'ns2'), metadata: { name: 'dc-3', namespace: 'ns2', labels: { batch: 'y' } } });
    const res = await call(emu, 'DELETE', '/api/v1/namespaces/ns2/secrets?labelSelector=batch%3Dx');
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['dc-1', 'dc-2']);
    expect(emu.listObjects('v1', 'Secret', 'ns2').map((s) => s.metadata.name)).toEqual(['dc-3']);
  });
});

describe('patch', () => {
  it('merge patch merges maps and deletes with null', async () => {
    emu.createObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'mp', namespace: 'default', labels: { a: '1', b: '2' } },
      data: { x: '1', y: '2' },
    });
    const res = await core.patchNamespacedConfigMap(
      { name: 'mp', namespace: 'default', body: { metadata: { labels: { b: null, c: '3' } }, data: { y: null, z: '3' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(res.metadata?.labels).toEqual({ a: '1', c: '3' });
    expect(res.data).toEqual({ x: '1', z: '3' });
  });

  it('strategic merge patch merges containers and env by name', async () => {
    emu.createObject(deployment('smp'));
    const res = await apps.patchNamespacedDeployment(
      {
        name: 'smp',
        namespace: 'default',
        body: {
          spec: {
            template: {
              spec: {
                containers: [
                  {
                    name: 'main',
                    image: 'nginx:1.28',
                    env: [
                      { name: 'B', value: 'changed' },
                      { name: 'C', value: '3' },
                      { name: 'A', $patch: 'delete' },
                    ],
                  },
                  { name: 'sidecar', image: 'busybox:1' },
                ],
              },
            },
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const containers = res.spec?.template.spec?.containers ?? [];
    expect(containers.map((c) => [c.name, c.image])).toEqual([
      ['main', 'nginx:1.28'],
      ['sidecar', 'busybox:1'],
    ]);
    expect(containers[0]?.env).toEqual([
      { name: 'B', value: 'changed' },
      { name: 'C', value: '3' },
    ]);
    expect(res.metadata?.generation).toBe(2);
  });

  it('strategic merge patch adds finalizers instead of replacing them', async () => {
    emu.createObject({ ...secret('smp-fin'), metadata: { name: 'smp-fin', namespace: 'default', finalizers: ['a/one'] } });
    const res = await call(emu, 'PATCH', '/api/v1/namespaces/default/secrets/smp-fin', {
      body: { metadata: { finalizers: ['b/two'] } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(res.body.metadata.finalizers).toEqual(['a/one', 'b/two']);
  });

  it('json patch applies ops, and a failed test op changes nothing', async () => {
    const s = emu.createObject(secret('jp'));
    const ok = await call(emu, 'PATCH', '/api/v1/namespaces/default/secrets/jp', {
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: s.metadata.resourceVersion },
        { op: 'add', path: '/data/new', value: 'bmV3' },
        { op: 'replace', path: '/data/k', value: 'cmVw' },
      ],
      contentType: 'application/json-patch+json',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ k: 'cmVw', new: 'bmV3' });
    const failed = await call(emu, 'PATCH', '/api/v1/namespaces/default/secrets/jp', {
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: s.metadata.resourceVersion },
        { op: 'remove', path: '/data/new' },
      ],
      contentType: 'application/json-patch+json',
    });
    expect(failed.status).toBe(422);
    expect(emu.getObject('v1', 'Secret', 'default', 'jp')?.data).toEqual({ k: 'cmVw', new: 'bmV3' });
  });

  it('patch carrying a stale resourceVersion conflicts; unknown patch types get 415; missing objects 404', async () => {
    emu.createObject(secret('prv'));
    const stale = await call(emu, 'PATCH', '/api/v1/namespaces/default/secrets/prv', {
      body: { metadata: { resourceVersion: '1' }, data: { k: 'eA==' } },
      contentType: 'application/merge-patch+json',
    });
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    const media = await call(emu, 'PATCH', '/api/v1/namespaces/default/secrets/prv', { body: {}, contentType: 'text/plain' });
    expect(media.status).toBe(415);
    const missing = await call(emu, 'PATCH', '/api/v1/namespaces/default/secrets/none', {
      body: { data: {} },
      contentType: 'application/merge-patch+json',
    });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('secrets "none" not found');
  });

  it('validates patched Secret data as base64', async () => {
    emu.createObject(secret('pb64'));
    const res = await call(emu, 'PATCH', '/api/v1/namespaces/default/secrets/pb64', {
      body: { data: { k: '%%%' } },
      contentType: 'application/merge-patch+json',
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('illegal base64 data at input byte 0');
  });
});

describe('list', () => {
  beforeAll(() => {
    const mk = (name: string, labels: Record<string, string>) =>
      emu.createObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns2', labels }, data: {} });
    mk('l-a', { tier: 'web', env: 'prod' });
    mk('l-b', { tier: 'db', env: 'prod' });
    mk('l-c', { tier: 'web', env: 'dev' });
    mk('l-d', { other: 'x' });
  });

  const names = async (query: string) => {
    const res = await call(emu, 'GET', `/api/v1/namespaces/ns2/configmaps?${query}`);
    expect(res.status).toBe(200);
    return res.body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
  };

  it('filters by label selectors', async () => {
    expect(await names('labelSelector=tier%3Dweb')).toEqual(['l-a', 'l-c']);
    expect(await names('labelSelector=tier%3D%3Dweb,env%3Dprod')).toEqual(['l-a']);
    expect(await names('labelSelector=tier!%3Dweb')).toEqual(['l-b', 'l-d']);
    expect(await names(`labelSelector=${encodeURIComponent('tier in (web, db)')}`)).toEqual(['l-a', 'l-b', 'l-c']);
    expect(await names(`labelSelector=${encodeURIComponent('env notin (prod)')}`)).toEqual(['l-c', 'l-d']);
    expect(await names('labelSelector=other')).toEqual(['l-d']);
    expect(await names(`labelSelector=${encodeURIComponent('!tier')}`)).toEqual(['l-d']);
  });

  it('filters by field selectors and rejects unknown fields', async () => {
    expect(await names('fieldSelector=metadata.name%3Dl-b')).toEqual(['l-b']);
    expect(await names('fieldSelector=metadata.name!%3Dl-b,metadata.namespace%3Dns2')).toEqual(['l-a', 'l-c', 'l-d']);
    const bad = await call(emu, 'GET', '/api/v1/namespaces/ns2/configmaps?fieldSelector=spec.foo%3Dx');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('field label not supported: spec.foo');
  });

  it('filters pods by spec.nodeName and status.phase across namespaces', async () => {
    const pod = (name: string, namespace: string, nodeName: string | undefined, phase: string) => {
      const p = emu.createObject({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace },
        spec: { containers: [{ name: 'c', image: 'busybox' }], ...(nodeName ? { nodeName } : {}) },
      });
      emu.updateObject({ ...p, status: { phase } });
    };
    pod('fp-1', 'ns1', 'node-a', 'Running');
    pod('fp-2', 'ns2', 'node-a', 'Pending');
    pod('fp-3', 'ns2', undefined, 'Pending');
    const list = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node-a' });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['fp-1', 'fp-2']);
    const unscheduled = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=,status.phase=Pending' });
    expect(unscheduled.items.map((p) => p.metadata?.name)).toEqual(['fp-3']);
  });

  it('paginates with limit/continue over a consistent snapshot', async () => {
    const first = await call(emu, 'GET', '/api/v1/namespaces/ns2/configmaps?limit=2');
    expect(first.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['l-a', 'l-b']);
    expect(first.body.metadata.remainingItemCount).toBe(2);
    emu.deleteObject('v1', 'ConfigMap', 'ns2', 'l-c');
    const second = await call(
      emu,
      'GET',
      `/api/v1/namespaces/ns2/configmaps?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`,
    );
    expect(second.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['l-c', 'l-d']);
    expect(second.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
    expect(second.body.metadata.continue).toBeUndefined();
  });

  it('honours resourceVersion on list: exact reads of history, too large, too old', async () => {
    const cm = emu.createObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hist', namespace: 'ns1' }, data: { v: '1' } });
    emu.updateObject({ ...cm, data: { v: '2' } });
    const exact = await call(
      emu,
      'GET',
      `/api/v1/namespaces/ns1/configmaps?resourceVersion=${cm.metadata.resourceVersion}&resourceVersionMatch=Exact`,
    );
    expect(exact.status).toBe(200);
    expect(exact.body.metadata.resourceVersion).toBe(cm.metadata.resourceVersion);
    expect(exact.body.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'hist').data).toEqual({ v: '1' });
    const tooLarge = await call(emu, 'GET', `/api/v1/namespaces/ns1/configmaps?resourceVersion=${Number(emu.resourceVersion) + 100}`);
    expect(tooLarge.status).toBe(504);
    expect(tooLarge.body.message).toMatch(/^Too large resource version/);
    const notOlder = await call(emu, 'GET', `/api/v1/namespaces/ns1/configmaps?resourceVersion=${cm.metadata.resourceVersion}`);
    expect(notOlder.body.metadata.resourceVersion).toBe(emu.resourceVersion);
  });
});

describe('scale subresource', () => {
  it('serves autoscaling/v1 Scale and writes spec.replicas through it', async () => {
    emu.createObject(deployment('scaled'));
    const scale = await call(emu, 'GET', '/apis/apps/v1/namespaces/default/deployments/scaled/scale');
    expect(scale.body).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 2 },
      status: { replicas: 0, selector: 'app=scaled' },
    });
    const put = await call(emu, 'PUT', '/apis/apps/v1/namespaces/default/deployments/scaled/scale', {
      body: { ...scale.body, spec: { replicas: 6 } },
    });
    expect(put.body.spec.replicas).toBe(6);
    const stale = await call(emu, 'PUT', '/apis/apps/v1/namespaces/default/deployments/scaled/scale', {
      body: { ...scale.body, spec: { replicas: 1 } },
    });
    expect(stale.status).toBe(409);
    const d = await apps.readNamespacedDeployment({ name: 'scaled', namespace: 'default' });
    expect(d.spec?.replicas).toBe(6);
    expect(d.metadata?.generation).toBe(2);
    expect((await call(emu, 'GET', '/apis/apps/v1/namespaces/default/daemonsets/x/scale')).status).toBe(404);
  });
});

describe('discovery', () => {
  it('serves /version, legacy discovery and aggregated discovery', async () => {
    const version = await call(emu, 'GET', '/version', { token: null });
    expect(version.body.gitVersion).toMatch(/^v1\.32\./);
    const v1 = await call(emu, 'GET', '/api/v1');
    expect(v1.body.kind).toBe('APIResourceList');
    const secrets = v1.body.resources.find((r: { name: string }) => r.name === 'secrets');
    expect(secrets).toMatchObject({ namespaced: true, kind: 'Secret' });
    expect(v1.body.resources.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining(['namespaces', 'namespaces/status', 'nodes', 'pods', 'pods/status', 'configmaps', 'events']),
    );
    const appsList = await call(emu, 'GET', '/apis/apps/v1');
    expect(appsList.body.resources.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining(['deployments', 'deployments/status', 'daemonsets', 'replicasets', 'controllerrevisions']),
    );
    const groups = await call(emu, 'GET', '/apis');
    expect(groups.body.groups.map((g: { name: string }) => g.name)).toEqual(
      expect.arrayContaining(['apps', 'authorization.k8s.io', 'authentication.k8s.io']),
    );
    const aggregated = await call(emu, 'GET', '/apis', {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    });
    expect(aggregated.contentType).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(aggregated.body.items[0].versions[0].resources.find((r: { resource: string }) => r.resource === 'deployments').scope).toBe(
      'Namespaced',
    );
  });
});
