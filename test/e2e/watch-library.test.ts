import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type IdentityWatch, type WatchIdentityOptions, watchIdentity } from '../../src/reload/index.js';
import {
  eventually,
  identityData,
  type KubeFixture,
  kubeFixture,
  NAMESPACE,
  newIdentity,
  ofType,
  recordEvents,
  SECRET,
  secretData,
} from './watch-fixture.js';

// The watcher library against the Kubernetes API emulator over real sockets.

const FAST = { initialDelayMs: 40, maxDelayMs: 320, random: () => 1 };

let fx: KubeFixture;
const watches: IdentityWatch[] = [];

function start(options: Partial<WatchIdentityOptions> = {}, token?: string): IdentityWatch {
  const w = watchIdentity({ connection: fx.connection(token), namespace: NAMESPACE, name: SECRET, retryPolicy: FAST, ...options });
  watches.push(w);
  return w;
}

/** A watcher on a Secret holding a fresh identity, loaded and with its watch open; events recorded from then on. */
async function watching(options: Partial<WatchIdentityOptions> = {}) {
  const id = newIdentity();
  fx.create(identityData(id));
  const w = start(options);
  await w.ready;
  await eventually(() => expect(fx.emu.openWatches).toBe(1));
  return { id, w, events: recordEvents(w) };
}

beforeEach(async () => {
  fx = await kubeFixture();
});
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.stop()));
  await fx.close();
});

describe('watchIdentity', () => {
  it('loads the identity, and a rotation reaches every watcher through one fieldSelector list+watch each', async () => {
    const first = newIdentity();
    fx.create(identityData(first, { api_key_hash: 'a'.repeat(64), orch_cluster_id: 'cluster-1' }));
    const fleet = Array.from({ length: 5 }, () => start());
    const loaded = await Promise.all(fleet.map((w) => w.ready));
    expect(loaded.map((id) => id.key.kid)).toEqual(Array(5).fill(first.fingerprint));
    expect(loaded[0]!.record).toMatchObject({ urn: first.urn, apiKeyHash: 'a'.repeat(64), orchClusterId: 'cluster-1' });
    await eventually(() => expect(fx.emu.openWatches).toBe(5));
    const events = fleet.map(recordEvents);

    const second = newIdentity();
    fx.update(identityData(second));
    await eventually(() => expect(fleet.map((w) => w.current()?.key.kid)).toEqual(Array(5).fill(second.fingerprint)));
    for (const e of events) {
      expect(ofType(e, 'loaded')).toEqual([
        expect.objectContaining({
          reason: 'rotated',
          urn: second.urn,
          fingerprint: second.fingerprint,
          previousFingerprint: first.fingerprint,
          changed: ['urn', 'private_key'],
        }),
      ]);
    }
    const lists = fx.requests('list');
    const watchRequests = fx.requests('watch');
    expect(lists).toHaveLength(5);
    expect(watchRequests).toHaveLength(5);
    for (const r of [...lists, ...watchRequests]) expect(r.query['fieldSelector']).toBe(`metadata.name=${SECRET}`);
    expect(fleet[0]!.metrics.reloads).toBe(1);
  });

  it('reloads when only the private_key or only the urn changes, and not for other keys or labels', async () => {
    const { id, w, events } = await watching();
    const rekeyed = { ...newIdentity(), urn: id.urn };
    fx.update(identityData(rekeyed));
    await eventually(() => expect(w.current()?.key.kid).toBe(rekeyed.fingerprint));
    const renamed = { ...rekeyed, urn: newIdentity().urn };
    fx.update(identityData(renamed));
    await eventually(() => expect(w.current()?.record.urn).toBe(renamed.urn));
    fx.update(identityData(renamed, { api_key_hash: 'b'.repeat(64) }), { extra: 'label' });
    fx.update(identityData(renamed, { api_key_hash: 'c'.repeat(64), orch_cluster_id: 'x' }));
    // One stream delivers in order: once this sentinel is loaded, the two updates before it were seen.
    const sentinel = newIdentity();
    fx.update(identityData(sentinel));
    await eventually(() => expect(w.current()?.key.kid).toBe(sentinel.fingerprint));
    expect(ofType(events, 'loaded').map((e) => e.changed)).toEqual([['private_key'], ['urn'], ['urn', 'private_key']]);
    expect(w.metrics.reloads).toBe(3);
  });

  it('works with a Role that grants only get, list and watch on the one Secret by resourceNames', async () => {
    const id = newIdentity();
    fx.create(identityData(id));
    fx.emu.addToken('runner-token', {
      user: 'system:serviceaccount:datadog:runner',
      namespace: NAMESPACE,
      rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: [SECRET], verbs: ['get', 'list', 'watch'] }],
    });
    const w = start({}, 'runner-token');
    const events = recordEvents(w);
    expect((await w.ready).key.kid).toBe(id.fingerprint);
    const next = newIdentity();
    fx.update(identityData(next));
    await eventually(() => expect(w.current()?.key.kid).toBe(next.fingerprint));
    const mine = fx.emu.requests.filter((r) => r.user === 'system:serviceaccount:datadog:runner');
    expect(mine.map((r) => [r.verb, r.status])).toEqual([
      ['list', 200],
      ['watch', 200],
    ]);
    expect(ofType(events, 'watch-error')).toEqual([]);
  });

  it('reports a Role without watch as KUBE_FORBIDDEN and keeps retrying with the identity it listed', async () => {
    const id = newIdentity();
    fx.create(identityData(id));
    fx.emu.addToken('list-only', {
      namespace: NAMESPACE,
      rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: [SECRET], verbs: ['list'] }],
    });
    const w = start({}, 'list-only');
    const events = recordEvents(w);
    expect((await w.ready).key.kid).toBe(id.fingerprint);
    const errors = await eventually(() => {
      const found = ofType(events, 'watch-error');
      expect(found.length).toBeGreaterThanOrEqual(2);
      return found;
    });
    expect(errors[0]!.error.code).toBe('KUBE_FORBIDDEN');
    expect(errors[0]!.error.message).toBe(
      `watching Secret ${NAMESPACE}/${SECRET}: secrets "${SECRET}" is forbidden: User "user-1" cannot watch resource "secrets" in API group "" in the namespace "${NAMESPACE}"`,
    );
    expect(errors[0]!.error.hint).toContain('Role rules with resourceNames suffice');
    expect(errors.map((e) => e.attempt).slice(0, 2)).toEqual([1, 2]);
    expect(w.current()?.key.kid).toBe(id.fingerprint);
  });

  it('never applies invalid content: it keeps the identity, reports and counts the error, then takes the next valid one', async () => {
    const { id, w, events } = await watching();
    const bad = newIdentity();
    const cases: Record<string, string>[] = [
      secretData({ private_key: `${bad.privateKey}=`, urn: bad.urn }),
      secretData({ private_key: bad.privateKey, urn: 'urn:dd:apps:on-prem-runner:us1:not-a-number:x' }),
      secretData({ urn: bad.urn }),
      secretData({ private_key: Buffer.from('{"kty":"RSA"}').toString('base64url'), urn: bad.urn }),
    ];
    for (const data of cases) fx.update(data);
    const rejected = await eventually(() => {
      const found = ofType(events, 'rejected');
      expect(found).toHaveLength(4);
      return found;
    });
    expect(rejected.map((e) => e.error.code)).toEqual(Array(4).fill('IDENTITY_INVALID'));
    expect(rejected.map((e) => e.keptFingerprint)).toEqual(Array(4).fill(id.fingerprint));
    expect(w.current()?.key.kid).toBe(id.fingerprint);
    expect(w.metrics.reloadErrors).toBe(4);
    expect(ofType(events, 'loaded')).toEqual([]);
    const good = newIdentity();
    fx.update(identityData(good));
    await eventually(() => expect(w.current()?.key.kid).toBe(good.fingerprint));
  });

  it('does not report the same invalid content twice when a periodic re-list sees it again', async () => {
    const { id, w, events } = await watching({ relistIntervalMs: 60 });
    fx.update(secretData({ private_key: 'garbage', urn: id.urn }));
    await eventually(() => expect(ofType(events, 'listed').filter((e) => e.reason === 'periodic').length).toBeGreaterThanOrEqual(2));
    expect(ofType(events, 'rejected')).toHaveLength(1);
    expect(w.current()?.key.kid).toBe(id.fingerprint);
  });

  it('keeps the identity when the Secret is deleted, and loads it again when it is re-created', async () => {
    const { id, w, events } = await watching();
    fx.remove();
    await eventually(() => expect(ofType(events, 'deleted')).toEqual([expect.objectContaining({ keptFingerprint: id.fingerprint })]));
    expect(w.current()?.key.kid).toBe(id.fingerprint);
    const next = newIdentity();
    fx.create(identityData(next));
    await eventually(() => expect(w.current()?.key.kid).toBe(next.fingerprint));
    expect(ofType(events, 'loaded')[0]).toMatchObject({ reason: 'rotated', previousFingerprint: id.fingerprint });
  });

  it('waits for a missing Secret (not ready, /readyz territory) and loads it when it appears', async () => {
    const w = start();
    const events = recordEvents(w);
    await eventually(() => expect(ofType(events, 'missing')).toHaveLength(1));
    expect(w.current()).toBeUndefined();
    const id = newIdentity();
    fx.create(identityData(id));
    expect((await w.ready).key.kid).toBe(id.fingerprint);
    expect(ofType(events, 'loaded')[0]).toMatchObject({ reason: 'initial' });
  });

  it('re-lists after 410 Expired without reporting an error, and picks up what changed meanwhile', async () => {
    const { w, events } = await watching();
    const next = newIdentity();
    // The watch ends; before the informer's resumed watch is served, the Secret changes and history is compacted.
    fx.emu.faults.beforeNext({ verb: 'watch', resource: 'secrets' }, () => {
      fx.update(identityData(next));
      fx.emu.compact();
    });
    expect(fx.emu.faults.endWatches()).toBe(1);
    await eventually(() => expect(w.current()?.key.kid).toBe(next.fingerprint));
    expect(ofType(events, 'listed')).toEqual([expect.objectContaining({ reason: 'expired', found: true })]);
    expect(ofType(events, 'watch-error')).toEqual([]);
    expect(fx.requests('list')).toHaveLength(2);
    expect(w.metrics.watchRestarts).toBe(0);
  });

  it('recovers from a dropped watch after one backoff wait and resumes from its resourceVersion', async () => {
    const { w, events } = await watching();
    const next = newIdentity();
    fx.emu.faults.beforeNext({ verb: 'watch', resource: 'secrets' }, () => fx.update(identityData(next)));
    expect(fx.emu.faults.dropWatches()).toBe(1);
    await eventually(() => expect(w.current()?.key.kid).toBe(next.fingerprint));
    // One error, one wait of the first backoff step: the schedule is what the watcher reports, not a
    // wall-clock bound that a busy machine could exceed.
    const errors = ofType(events, 'watch-error');
    expect(errors.map((e) => [e.attempt, e.retryInMs])).toEqual([[1, FAST.initialDelayMs]]);
    expect(errors[0]!.error.code).toBe('KUBE_UNREACHABLE');
    // Resumed, not re-listed: one list at start only.
    expect(fx.requests('list')).toHaveLength(1);
    expect(w.metrics.watchRestarts).toBe(1);
  });

  it('rides out a dropped watch followed by a burst of 500s with growing backoff, then recovers', async () => {
    const { w, events } = await watching();
    fx.emu.faults.failNext({ verb: 'watch', resource: 'secrets' }, { times: 3 });
    fx.emu.faults.dropWatches();
    await eventually(() => expect(fx.emu.openWatches).toBe(1));
    const errors = ofType(events, 'watch-error');
    expect(errors.map((e) => [e.attempt, e.retryInMs])).toEqual([
      [1, 40],
      [2, 80],
      [3, 160],
      [4, 320],
    ]);
    expect(errors.slice(1).map((e) => e.error.code)).toEqual(['KUBE_API_ERROR', 'KUBE_API_ERROR', 'KUBE_API_ERROR']);
    expect(errors[1]!.error.message).toContain('HTTP 500');
    // Exactly these four waits and no more: four errors, then the watch that is open again.
    expect(fx.requests('watch')).toHaveLength(1 + 4);
    const next = newIdentity();
    fx.update(identityData(next));
    await eventually(() => expect(w.current()?.key.kid).toBe(next.fingerprint));
    // The backoff starts over once a watch stream is open again.
    fx.emu.faults.dropWatches();
    await eventually(() => expect(ofType(events, 'watch-error')).toHaveLength(5));
    expect(ofType(events, 'watch-error')[4]!.attempt).toBe(1);
  });

  it('starts despite list errors at first, after the backoff waits it reports', async () => {
    const id = newIdentity();
    fx.create(identityData(id));
    fx.emu.faults.failNext({ verb: 'list', resource: 'secrets' }, { times: 2, code: 503 });
    const w = start();
    const events = recordEvents(w);
    expect((await w.ready).key.kid).toBe(id.fingerprint);
    expect(ofType(events, 'watch-error').map((e) => [e.error.code, e.retryInMs])).toEqual([
      ['KUBE_API_ERROR', 40],
      ['KUBE_API_ERROR', 80],
    ]);
    expect(fx.requests('list')).toHaveLength(3);
    expect(ofType(events, 'listed')).toEqual([expect.objectContaining({ reason: 'restart', found: true })]);
  });

  it('catches a change through the periodic re-list when the watch delivers nothing', async () => {
    fx.create(identityData(newIdentity()));
    // The first watch request hangs: like a half-open connection, it neither delivers nor fails.
    const hang = fx.emu.faults.delay({ verb: 'watch', resource: 'secrets' }, 30_000, { times: 1 });
    const w = start({ relistIntervalMs: 150 });
    await w.ready;
    await eventually(() => expect(hang.hits).toBe(1));
    const events = recordEvents(w);
    const next = newIdentity();
    fx.update(identityData(next));
    await eventually(() => expect(w.current()?.key.kid).toBe(next.fingerprint));
    expect(ofType(events, 'listed')[0]).toMatchObject({ reason: 'periodic', found: true });
    expect(ofType(events, 'watch-error')).toEqual([]);
  });

  it('sends nothing while idle beyond the open watch; bookmarks keep it alive', async () => {
    await fx.close();
    fx = await kubeFixture({ bookmarkIntervalMs: 20 });
    const { w } = await watching();
    const before = fx.emu.requests.length;
    const since = Date.now();
    await eventually(() => expect(w.metrics.lastActivityMs).toBeGreaterThan(since + 100));
    expect(fx.emu.requests.length).toBe(before);
    expect(fx.requests('watch')[0]!.query['allowWatchBookmarks']).toBe('true');
  });

  it('applies a rotation after a random splay, newest content winning within the window', async () => {
    const { w, events } = await watching({ splayMs: 200, random: () => 0.5 });
    const a = newIdentity();
    const b = newIdentity();
    fx.update(identityData(a));
    fx.update(identityData(b));
    await eventually(() => expect(w.current()?.key.kid).toBe(b.fingerprint));
    expect(ofType(events, 'loaded')).toEqual([expect.objectContaining({ fingerprint: b.fingerprint, splayMs: 100 })]);
  });

  it('stop() closes the watch, and rejects ready with INTERRUPTED when nothing was loaded', async () => {
    const w = start();
    await eventually(() => expect(fx.emu.openWatches).toBe(1));
    await w.stop();
    await expect(w.ready).rejects.toMatchObject({ code: 'INTERRUPTED' });
    await eventually(() => expect(fx.emu.openWatches).toBe(0));
    fx.create(identityData(newIdentity()));
    expect(w.current()).toBeUndefined();
  });

  it('exposes counters, the fingerprint and freshness as Prometheus text', async () => {
    const { id, w } = await watching();
    const next = newIdentity();
    fx.update(identityData(next));
    await eventually(() => expect(w.metrics.reloads).toBe(1));
    const text = w.metrics.render(Date.now());
    expect(text).toContain(`par_reloads_total{namespace="${NAMESPACE}",secret="${SECRET}"} 1\n`);
    expect(text).toContain(
      `par_identity_info{namespace="${NAMESPACE}",secret="${SECRET}",fingerprint="${next.fingerprint}",urn="${next.urn}"} 1\n`,
    );
    expect(text).toMatch(/^par_last_event_timestamp_seconds\{[^}]*\} \d+\.\d{3}$/m);
    for (const key of [id.privateKey, next.privateKey]) expect(text).not.toContain(key);
  });
});
