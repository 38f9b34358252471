import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type V1Secret } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeEmulator } from '../../emulators/kube/index.js';
import type { ParError } from '../../src/errors.js';
import { kubeFailure } from '../../src/kube/index.js';
import { resolveCluster } from '../../src/kube/cluster-connection.js';
import { call, kubeConfigFor, parseErrorBody, RawWatch, secret, startSeeded, until } from './kube-helpers.js';

let emu: KubeEmulator;
beforeEach(async () => {
  emu = await startSeeded();
  emu.createObject(secret('target'));
});
afterEach(() => emu.close());

describe('faults', () => {
  it('failNext fails exactly the next N matching requests with a Status', async () => {
    const h = emu.faults.failNext({ verb: 'get', resource: 'secrets', name: 'target' }, { times: 2 });
    const other = await call(emu, 'GET', '/api/v1/namespaces/default/configmaps');
    expect(other.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await call(emu, 'GET', '/api/v1/namespaces/default/secrets/target');
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', code: 500, reason: 'InternalError' });
    }
    expect((await call(emu, 'GET', '/api/v1/namespaces/default/secrets/target')).status).toBe(200);
    expect(h.hits).toBe(2);
  });

  it('failNext can answer any code, reason and message, seen by client-node as an ApiException', async () => {
    emu.faults.failNext(
      { method: 'PUT', path: /\/secrets\/target$/ },
      { code: 503, reason: 'ServiceUnavailable', message: 'etcd is down' },
    );
    const core = kubeConfigFor(emu).makeApiClient(CoreV1Api);
    const s = await core.readNamespacedSecret({ name: 'target', namespace: 'default' });
    const err = await core.replaceNamespacedSecret({ name: 'target', namespace: 'default', body: s }).catch((e) => e);
    expect(err.code).toBe(503);
    expect(parseErrorBody(err)).toMatchObject({ reason: 'ServiceUnavailable', message: 'etcd is down', code: 503 });
    expect(emu.getObject('v1', 'Secret', 'default', 'target')?.metadata.resourceVersion).toBe(s.metadata?.resourceVersion);
  });

  it('failNext matches with a predicate over query and user, and can be cancelled', async () => {
    const h = emu.faults.failNext({ predicate: (r) => r.query['dryRun'] === 'All' }, { times: 5, code: 429 });
    expect((await call(emu, 'POST', '/api/v1/namespaces/default/secrets?dryRun=All', { body: secret('d') })).status).toBe(429);
    h.cancel();
    expect((await call(emu, 'POST', '/api/v1/namespaces/default/secrets?dryRun=All', { body: secret('d') })).status).toBe(201);
  });

  it('delay slows matching requests only', async () => {
    const h = emu.faults.delay({ verb: 'list' }, 300, { times: 1 });
    // A request that does not match is not held (no hit), however long the machine takes to answer it.
    expect((await call(emu, 'GET', '/api/v1/namespaces/default/secrets/target')).status).toBe(200);
    expect(h.hits).toBe(0);
    const t1 = Date.now();
    await call(emu, 'GET', '/api/v1/namespaces/default/secrets');
    expect(Date.now() - t1).toBeGreaterThanOrEqual(290);
    expect(h.hits).toBe(1);
  });

  it('dropWatches ends open streams abruptly', async () => {
    const a = await RawWatch.open(emu, '/api/v1/namespaces/default/secrets?watch=1');
    const b = await RawWatch.open(emu, '/api/v1/namespaces/default/configmaps?watch=1');
    await a.waitFor(1);
    expect(emu.faults.dropWatches()).toBe(2);
    await a.waitEnd();
    await b.waitEnd();
    expect(a.error).toBeDefined();
    expect(emu.openWatches).toBe(0);
  });

  it('endWatches ends open streams cleanly, like a server-side watch timeout', async () => {
    const a = await RawWatch.open(emu, '/api/v1/namespaces/default/secrets?watch=1');
    await a.waitFor(1);
    expect(emu.faults.endWatches()).toBe(1);
    await a.waitEnd();
    expect(a.error).toBeUndefined();
  });

  it('beforeNext runs a concurrent writer between a read and a write, producing a real Conflict', async () => {
    const core = kubeConfigFor(emu).makeApiClient(CoreV1Api);
    const read = await core.readNamespacedSecret({ name: 'target', namespace: 'default' });
    let ran = 0;
    emu.faults.beforeNext({ verb: 'update', name: 'target' }, () => {
      ran++;
      const cur = emu.getObject('v1', 'Secret', 'default', 'target')!;
      emu.updateObject({ ...cur, data: { k: Buffer.from('theirs').toString('base64') } });
    });
    const err = await core
      .replaceNamespacedSecret({
        name: 'target',
        namespace: 'default',
        body: { ...read, data: { k: Buffer.from('mine').toString('base64') } } as V1Secret,
      })
      .catch((e) => e);
    expect(ran).toBe(1);
    expect(err.code).toBe(409);
    expect(parseErrorBody(err).message).toContain('the object has been modified');
    expect(
      Buffer.from((emu.getObject('v1', 'Secret', 'default', 'target')!['data'] as Record<string, string>)['k']!, 'base64').toString(),
    ).toBe('theirs');
    // One-shot: the retry goes through.
    const again = await core.readNamespacedSecret({ name: 'target', namespace: 'default' });
    await core.replaceNamespacedSecret({
      name: 'target',
      namespace: 'default',
      body: { ...again, data: { k: Buffer.from('mine').toString('base64') } } as V1Secret,
    });
    expect(ran).toBe(1);
  });

  it('beforeNext may be async and is awaited', async () => {
    emu.faults.beforeNext({ verb: 'delete' }, async () => {
      // Deleted on a later turn of the event loop: only an awaited hook gets a 404.
      await new Promise((r) => setImmediate(r));
      emu.deleteObject('v1', 'Secret', 'default', 'target');
    });
    const res = await call(emu, 'DELETE', '/api/v1/namespaces/default/secrets/target');
    expect(res.status).toBe(404);
  });

  it('records requests without bodies', async () => {
    const marker = 'c2VjcmV0LXZhbHVlLW1hcmtlcg==';
    await call(emu, 'POST', '/api/v1/namespaces/default/secrets?fieldManager=t', { body: secret('rec', 'default', { k: marker }) });
    const rec = emu.requests.find((r) => r.verb === 'create' && r.resource === 'secrets');
    expect(rec).toMatchObject({
      method: 'POST',
      path: '/api/v1/namespaces/default/secrets',
      query: { fieldManager: 't' },
      namespace: 'default',
      user: 'kubernetes-admin',
      status: 201,
    });
    expect(JSON.stringify(emu.requests)).not.toContain(marker);
  });
});

describe('hang', () => {
  it('holds matching requests without an answer until cancelled; others are served', async () => {
    const h = emu.faults.hang({ verb: 'get', resource: 'secrets', name: 'target' });
    let answered = false;
    const held = call(emu, 'GET', '/api/v1/namespaces/default/secrets/target').then((r) => {
      answered = true;
      return r;
    });
    // Once the server holds it, a request that is not matched goes through while the other one hangs.
    await until(() => h.hits === 1);
    expect((await call(emu, 'GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
    expect(answered).toBe(false);
    expect(h.hits).toBe(1);
    h.cancel();
    expect((await held).status).toBe(200);
  });

  it('a client with a per-request timeout gives up (KUBE_TIMEOUT naming the call); close() cuts held requests', async () => {
    const h = emu.faults.hang({ resource: 'secrets' });
    const dir = await mkdtemp(join(tmpdir(), 'par-hang-'));
    try {
      await emu.writeKubeconfig(join(dir, 'kubeconfig'));
      const conn = await resolveCluster({ kubeconfig: join(dir, 'kubeconfig'), env: { HOME: dir }, limits: { requestTimeoutMs: 100 } });
      const err = await conn
        .core()
        .readNamespacedSecret({ name: 'target', namespace: 'default' })
        .catch((e: unknown) => kubeFailure(e, 'reading Secret default/target', 'Nothing was changed.'));
      expect(err).toMatchObject({
        code: 'KUBE_TIMEOUT',
        exitCode: 9,
        message: 'reading Secret default/target: no answer from the Kubernetes API within 0.1 s (request timeout)',
      });
      expect((err as ParError).hint).toMatch(/^Nothing was changed\./);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const pending = call(emu, 'GET', '/api/v1/namespaces/default/secrets/target').catch((e: unknown) => e);
    await until(() => h.hits === 2);
    await emu.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});
