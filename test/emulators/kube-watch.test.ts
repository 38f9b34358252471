import { CoreV1Api, ListWatch, makeInformer, type V1Secret, Watch } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeEmulator } from '../../emulators/kube/index.js';
import { RawWatch, kubeConfigFor, secret, startSeeded } from './kube-helpers.js';

let emu: KubeEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** Resolves when `check` passes, polling on the event loop rather than sleeping a fixed time. */
async function eventually(check: () => void, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

describe('watch with client-node', () => {
  it('starts with synthetic ADDED for rv=0 and then streams MODIFIED and DELETED', async () => {
    emu = await startSeeded();
    const e = emu;
    e.createObject(secret('w-a'));
    const events: Array<[string, string, string]> = [];
    let doneErr: unknown = 'not called';
    const watch = new Watch(kubeConfigFor(e));
    const ctl = await watch.watch(
      '/api/v1/namespaces/default/secrets',
      { resourceVersion: '0' },
      (type, obj) => events.push([type, obj.metadata.name, obj.metadata.resourceVersion]),
      (err) => {
        doneErr = err;
      },
    );
    await eventually(() => expect(events).toHaveLength(1));
    const cur = e.getObject('v1', 'Secret', 'default', 'w-a')!;
    expect(events[0]).toEqual(['ADDED', 'w-a', cur.metadata.resourceVersion]);
    const upd = e.updateObject({ ...cur, data: { k: 'MQ==' } });
    e.deleteObject('v1', 'Secret', 'default', 'w-a');
    await eventually(() => expect(events).toHaveLength(3));
    expect(events[1]).toEqual(['MODIFIED', 'w-a', upd.metadata.resourceVersion]);
    expect(events[2]![0]).toBe('DELETED');
    expect(Number(events[2]![2])).toBe(Number(upd.metadata.resourceVersion) + 1);
    ctl.abort();
    await eventually(() => expect(doneErr).not.toBe('not called'));
  });

  it('resumes after a resourceVersion with only later changes', async () => {
    emu = await startSeeded();
    const a = emu.createObject(secret('r-a'));
    const b = emu.createObject(secret('r-b'));
    const c = emu.updateObject({ ...a, data: { k: 'Mg==' } });
    const w = await RawWatch.open(emu, `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${a.metadata.resourceVersion}`);
    const evs = await w.waitFor(2);
    expect(evs.map((x) => [x.type, x.object.metadata.name, x.object.metadata.resourceVersion])).toEqual([
      ['ADDED', 'r-b', b.metadata.resourceVersion],
      ['MODIFIED', 'r-a', c.metadata.resourceVersion],
    ]);
    expect(evs[0]!.object.kind).toBe('Secret');
    expect(evs[0]!.object.apiVersion).toBe('v1');
    w.close();
  });

  it('sends ERROR 410 Expired for a resourceVersion older than the kept history, then ends', async () => {
    emu = await startSeeded({ historyLimit: 3 });
    const first = emu.createObject(secret('h-0'));
    for (let i = 1; i <= 5; i++) emu.createObject(secret(`h-${i}`));
    const w = await RawWatch.open(emu, `/api/v1/namespaces/default/secrets?watch=true&resourceVersion=${first.metadata.resourceVersion}`);
    expect(w.status).toBe(200);
    await w.waitEnd();
    expect(w.events).toHaveLength(1);
    const oldest = Number(emu.resourceVersion) - 3;
    expect(w.events[0]).toEqual({
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${first.metadata.resourceVersion} (${oldest})`,
        reason: 'Expired',
        code: 410,
      },
    });
  });

  it('compact() makes every earlier resourceVersion expire', async () => {
    emu = await startSeeded();
    const a = emu.createObject(secret('c-a'));
    emu.createObject(secret('c-b'));
    const okBefore = await RawWatch.open(emu, `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${a.metadata.resourceVersion}`);
    await okBefore.waitFor(1);
    okBefore.close();
    emu.compact();
    const w = await RawWatch.open(emu, `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${a.metadata.resourceVersion}`);
    await w.waitEnd();
    expect(w.events[0]!.type).toBe('ERROR');
    expect(w.events[0]!.object.code).toBe(410);
    expect(w.events[0]!.object.message).toBe(`too old resource version: ${a.metadata.resourceVersion} (${emu.resourceVersion})`);
    const current = await RawWatch.open(emu, `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${emu.resourceVersion}`);
    emu.createObject(secret('c-c'));
    expect((await current.waitFor(1))[0]!.object.metadata.name).toBe('c-c');
    current.close();
  });

  it('sends bookmarks when allowed, carrying only the resourceVersion', async () => {
    emu = await startSeeded({ bookmarkIntervalMs: 30 });
    const s = emu.createObject(secret('bm'));
    const w = await RawWatch.open(
      emu,
      `/api/v1/namespaces/default/secrets?watch=1&allowWatchBookmarks=true&resourceVersion=${s.metadata.resourceVersion}`,
    );
    emu.createObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other', namespace: 'default' } });
    const [bm] = await w.waitFor(1);
    expect(bm).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'Secret', apiVersion: 'v1', metadata: { resourceVersion: emu.resourceVersion } },
    });
    w.close();
    const none = await RawWatch.open(
      emu,
      `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${emu.resourceVersion}&timeoutSeconds=1`,
    );
    await none.waitEnd();
    expect(none.events).toEqual([]);
  });

  it('ends the stream after timeoutSeconds', async () => {
    emu = await startSeeded();
    const started = Date.now();
    const w = await RawWatch.open(emu, '/api/v1/namespaces/default/secrets?watch=1&timeoutSeconds=1');
    await w.waitEnd(4000);
    expect(w.error).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(emu.openWatches).toBe(0);
  });

  it('turns objects entering and leaving a label selector into ADDED and DELETED', async () => {
    emu = await startSeeded();
    const w = await RawWatch.open(
      emu,
      `/api/v1/namespaces/default/secrets?watch=1&labelSelector=role%3Dtarget&resourceVersion=${emu.resourceVersion}`,
    );
    const s = emu.createObject(secret('sel'));
    const inSel = emu.updateObject({ ...s, metadata: { ...s.metadata, labels: { role: 'target' } } });
    const stillIn = emu.updateObject({ ...inSel, data: { k: 'Mw==' } });
    const out = emu.updateObject({ ...stillIn, metadata: { ...stillIn.metadata, labels: { role: 'other' } } });
    const evs = await w.waitFor(3);
    expect(evs.map((e) => [e.type, e.object.metadata.resourceVersion])).toEqual([
      ['ADDED', inSel.metadata.resourceVersion],
      ['MODIFIED', stillIn.metadata.resourceVersion],
      ['DELETED', out.metadata.resourceVersion],
    ]);
    // A DELETED for an object leaving the selection carries its last matching content.
    expect(evs[2]!.object.metadata.labels).toEqual({ role: 'target' });
    w.close();
  });

  it('filters a watch by metadata.name, also through the legacy /watch/ path', async () => {
    emu = await startSeeded();
    const w = await RawWatch.open(
      emu,
      `/api/v1/namespaces/default/secrets?watch=1&fieldSelector=metadata.name%3Dfx&resourceVersion=${emu.resourceVersion}`,
    );
    const legacy = await RawWatch.open(emu, `/api/v1/watch/namespaces/default/secrets/fx?resourceVersion=${emu.resourceVersion}`);
    emu.createObject(secret('fy'));
    emu.createObject(secret('fx'));
    expect((await w.waitFor(1))[0]!.object.metadata.name).toBe('fx');
    expect((await legacy.waitFor(1))[0]!.object.metadata.name).toBe('fx');
    expect(w.events).toHaveLength(1);
    w.close();
    legacy.close();
  });

  it('supports sendInitialEvents with an initial-events-end bookmark', async () => {
    emu = await startSeeded();
    emu.createObject(secret('ie-a'));
    emu.createObject(secret('ie-b'));
    const w = await RawWatch.open(
      emu,
      '/api/v1/namespaces/default/secrets?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
    );
    const evs = await w.waitFor(3);
    expect(evs.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'BOOKMARK']);
    expect(evs[2]!.object.metadata).toEqual({
      resourceVersion: emu.resourceVersion,
      annotations: { 'k8s.io/initial-events-end': 'true' },
    });
    w.close();
  });

  it('close() ends open watches', async () => {
    emu = await startSeeded();
    const w = await RawWatch.open(emu, '/api/v1/namespaces/default/secrets?watch=1');
    expect(emu.openWatches).toBe(1);
    await emu.close();
    await w.waitEnd();
    expect(w.ended).toBe(true);
  });
});

describe('informer', () => {
  it('follows one Secret through a fieldSelector-restricted ListWatch and re-lists after 410', async () => {
    emu = await startSeeded();
    const e = emu;
    e.createObject(secret('target'));
    e.createObject(secret('bystander'));
    const kc = kubeConfigFor(e);
    const core = kc.makeApiClient(CoreV1Api);
    const fieldSelector = 'metadata.name=target';
    const path = '/api/v1/namespaces/default/secrets';
    const lw = new ListWatch<V1Secret>(
      path,
      new Watch(kc),
      () => core.listNamespacedSecret({ namespace: 'default', fieldSelector }),
      false,
      undefined,
      fieldSelector,
    );
    const seen: string[] = [];
    lw.on('add', (s) => seen.push(`add:${s.data?.['k']}`));
    lw.on('update', (s) => seen.push(`update:${s.data?.['k']}`));
    const errors: unknown[] = [];
    lw.on('error', (err) => errors.push(err));
    await lw.start();
    await eventually(() => expect(seen).toEqual(['add:dg==']));
    expect(lw.list('default').map((s) => s.metadata?.name)).toEqual(['target']);

    const cur = e.getObject('v1', 'Secret', 'default', 'target')!;
    const upd = e.updateObject({ ...cur, data: { k: 'djI=' } });
    await eventually(() => expect(seen).toEqual(['add:dg==', 'update:djI=']));
    expect(lw.latestResourceVersion()).toBe(upd.metadata.resourceVersion);

    // The informer's next watch finds its resourceVersion compacted away: 410, then a fresh list.
    e.faults.beforeNext({ verb: 'watch', resource: 'secrets' }, () => {
      const now = e.getObject('v1', 'Secret', 'default', 'target')!;
      e.updateObject({ ...now, data: { k: 'djM=' } });
      e.compact();
    });
    expect(e.faults.endWatches()).toBe(1);
    await eventually(() => expect(seen).toEqual(['add:dg==', 'update:djI=', 'update:djM=']));
    const lists = e.requests.filter((r) => r.verb === 'list' && r.resource === 'secrets');
    expect(lists).toHaveLength(2);
    expect(lists.every((r) => r.query['fieldSelector'] === fieldSelector && r.name === 'target')).toBe(true);
    expect(errors).toEqual([]);
    await lw.stop();
  });

  it('makeInformer reports a dropped watch as an error', async () => {
    emu = await startSeeded();
    const kc = kubeConfigFor(emu);
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1Secret>(kc, '/api/v1/namespaces/ns1/secrets', () => core.listNamespacedSecret({ namespace: 'ns1' }));
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    const added: string[] = [];
    informer.on('add', (s) => added.push(s.metadata!.name!));
    await informer.start();
    await eventually(() => expect(emu!.openWatches).toBe(1));
    emu.createObject(secret('inf-a', 'ns1'));
    await eventually(() => expect(added).toEqual(['inf-a']));
    expect(emu.faults.dropWatches()).toBe(1);
    await eventually(() => expect(errors).toHaveLength(1));
    await informer.stop();
  });
});
