import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeEmulator, KubeObject } from '../../emulators/kube/index.js';
import { call, deployment, RawWatch, secret, startSeeded } from './kube-helpers.js';
import { kubectlIn, kubectlPath, kubectlRequired } from './kubectl-runner.js';

// Events as kube-apiserver serves them: one stored object, a core/v1 view (involvedObject,
// message, reportingComponent) and an events.k8s.io/v1 view (regarding, note, reportingController).

let emu: KubeEmulator;
let ident: KubeObject;
let web: KubeObject;
const EV1 = '/apis/events.k8s.io/v1/namespaces/ns1/events';
const CORE = '/api/v1/namespaces/ns1/events';
const TIME = '2026-01-02T03:04:05.123456Z';

function ref(obj: KubeObject) {
  return { kind: obj.kind, apiVersion: obj.apiVersion, namespace: obj.metadata.namespace, name: obj.metadata.name, uid: obj.metadata.uid };
}

function newEvent(obj: KubeObject, reason: string, extra: Record<string, unknown> = {}) {
  return {
    metadata: { generateName: `${obj.metadata.name}.` },
    regarding: ref(obj),
    reason,
    note: `${reason} happened`,
    type: 'Normal',
    action: 'Rotate',
    eventTime: TIME,
    reportingController: 'par-identity',
    reportingInstance: 'host-1',
    ...extra,
  };
}

beforeAll(async () => {
  emu = await startSeeded();
  ident = emu.createObject(secret('ident', 'ns1'));
  web = emu.createObject(deployment('web', 'ns1'));
  emu.addToken('no-events', {
    user: 'system:serviceaccount:ns1:rotator',
    namespace: 'ns1',
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
  });
  emu.addToken('core-events-only', {
    user: 'core-writer',
    namespace: 'ns1',
    rules: [{ apiGroups: [''], resources: ['events'], verbs: ['create'] }],
  });
  emu.addToken('events-writer', {
    user: 'events-writer',
    namespace: 'ns1',
    rules: [{ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] }],
  });
});
afterAll(() => emu.close());

describe('two views of one Event', () => {
  it('an events.k8s.io/v1 Event reads back through core/v1 with the fields mapped', async () => {
    const created = await call(emu, 'POST', EV1, { body: newEvent(ident, 'IdentityRotated') });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      regarding: ref(ident),
      note: 'IdentityRotated happened',
      reportingController: 'par-identity',
      reportingInstance: 'host-1',
      action: 'Rotate',
      eventTime: TIME,
    });
    expect(created.body.deprecatedFirstTimestamp).toBeNull();
    const name = created.body.metadata.name as string;
    expect(name).toMatch(/^ident\.[a-z0-9]{5}$/);
    const core = await call(emu, 'GET', `${CORE}/${name}`);
    expect(core.status).toBe(200);
    expect(core.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: ref(ident),
      message: 'IdentityRotated happened',
      reportingComponent: 'par-identity',
      reportingInstance: 'host-1',
      action: 'Rotate',
      eventTime: TIME,
      reason: 'IdentityRotated',
      type: 'Normal',
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
    });
    expect(core.body).not.toHaveProperty('regarding');
    expect(core.body).not.toHaveProperty('note');
    expect(core.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
  });

  it('a core/v1 Event (client-go recorder style) reads back through events.k8s.io/v1', async () => {
    const body = {
      metadata: { name: 'web.legacy' },
      involvedObject: ref(web),
      reason: 'ScalingReplicaSet',
      message: 'Scaled up replica set web-1 to 2',
      source: { component: 'deployment-controller' },
      firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:05:05Z',
      count: 3,
      type: 'Normal',
    };
    expect((await call(emu, 'POST', CORE, { body })).status).toBe(201);
    const v1 = await call(emu, 'GET', `${EV1}/web.legacy`);
    expect(v1.body).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      regarding: ref(web),
      note: 'Scaled up replica set web-1 to 2',
      deprecatedSource: { component: 'deployment-controller' },
      deprecatedFirstTimestamp: '2026-01-02T03:04:05Z',
      deprecatedLastTimestamp: '2026-01-02T03:05:05Z',
      deprecatedCount: 3,
      eventTime: null,
    });
    expect(v1.body).not.toHaveProperty('involvedObject');
    expect(v1.body).not.toHaveProperty('reportingController');
    // The direct store accessors serve the version asked for, too.
    expect(emu.getObject('events.k8s.io/v1', 'Event', 'ns1', 'web.legacy')?.['note']).toBe('Scaled up replica set web-1 to 2');
    expect(emu.getObject('v1', 'Event', 'ns1', 'web.legacy')?.['message']).toBe('Scaled up replica set web-1 to 2');
  });

  it('validates events.k8s.io/v1 creates as new-style Events (eventTime, action, controller, type)', async () => {
    const { eventTime: _t, action: _a, ...missing } = newEvent(ident, 'IdentityRotated');
    const res = await call(emu, 'POST', EV1, { body: { ...missing, type: 'Info' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('Event.events.k8s.io');
    const fields = (res.body.details.causes as Array<{ field: string }>).map((c) => c.field).sort();
    expect(fields).toEqual(['action', 'eventTime', 'type']);
    const long = await call(emu, 'POST', EV1, { body: newEvent(ident, 'IdentityRotated', { note: 'x'.repeat(1025) }) });
    expect(long.status).toBe(422);
    expect(long.body.details.causes[0].field).toBe('note');
    const strict = await call(emu, 'POST', `${EV1}?fieldValidation=Strict`, { body: { ...newEvent(ident, 'X'), message: 'core field' } });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('unknown field "message"');
  });

  it('decodes eventTime as a MicroTime: six fractional digits, as time.Parse(RFC3339Micro) wants', async () => {
    for (const eventTime of ['2026-01-02T03:04:05.123Z', '2026-01-02T03:04:05Z']) {
      const res = await call(emu, 'POST', EV1, { body: newEvent(ident, 'IdentityRotated', { eventTime }) });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(`parsing time "${eventTime}"`);
    }
  });

  it('checks that a legacy core Event lives in the namespace of its object', async () => {
    const res = await call(emu, 'POST', CORE, {
      body: { metadata: { name: 'wrong-ns' }, involvedObject: { ...ref(ident), namespace: 'ns2' }, reason: 'X', message: 'y' },
    });
    expect(res.status).toBe(422);
    expect(res.body.details.causes[0]).toMatchObject({
      field: 'involvedObject.namespace',
      message: 'Invalid value: "ns2": does not match event.namespace',
    });
  });
});

describe('field selectors', () => {
  it('selects on regarding.* in events.k8s.io/v1 and involvedObject.* in core/v1', async () => {
    await call(emu, 'POST', EV1, { body: newEvent(web, 'RolloutStarted') });
    await call(emu, 'POST', EV1, { body: newEvent(web, 'RolloutFailed', { type: 'Warning' }) });
    const names = (body: { items: Array<{ reason: string }> }) => body.items.map((e) => e.reason).sort();
    const sel = (path: string, s: string) => call(emu, 'GET', `${path}?fieldSelector=${encodeURIComponent(s)}`);
    expect(names((await sel(EV1, `regarding.kind=Secret,regarding.name=ident,regarding.uid=${ident.metadata.uid}`)).body)).toEqual([
      'IdentityRotated',
    ]);
    expect(names((await sel(CORE, `involvedObject.kind=Secret,involvedObject.name=ident,involvedObject.namespace=ns1`)).body)).toEqual([
      'IdentityRotated',
    ]);
    expect(names((await sel(EV1, `regarding.name=web,type=Warning`)).body)).toEqual(['RolloutFailed']);
    expect(names((await sel(CORE, `involvedObject.uid=${web.metadata.uid},reason=RolloutStarted`)).body)).toEqual(['RolloutStarted']);
    expect(names((await sel(EV1, 'reportingController=par-identity,regarding.namespace=ns1')).body)).toEqual([
      'IdentityRotated',
      'RolloutFailed',
      'RolloutStarted',
    ]);
    // Each version knows only its own labels, as the apiserver's field label conversions do.
    for (const [path, label] of [
      [EV1, 'involvedObject.name'],
      [EV1, 'source'],
      [CORE, 'regarding.name'],
      [CORE, 'note'],
    ] as const) {
      const res = await sel(path, `${label}=x`);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(`field label not supported: ${label}`);
    }
  });

  it('watches events.k8s.io/v1 with a regarding selector and sees a core/v1 write in its own form', async () => {
    const w = await RawWatch.open(
      emu,
      `${EV1}?watch=true&fieldSelector=${encodeURIComponent('regarding.name=ident,reason=IdentityRolledBack')}&resourceVersion=${emu.resourceVersion}`,
    );
    try {
      await call(emu, 'POST', EV1, { body: newEvent(web, 'IdentityRolledBack') });
      await call(emu, 'POST', CORE, {
        body: {
          metadata: { name: 'ident.rb' },
          involvedObject: ref(ident),
          reason: 'IdentityRolledBack',
          message: 'rolled back',
          type: 'Normal',
          eventTime: TIME,
          action: 'Rollback',
          reportingComponent: 'par-identity',
          reportingInstance: 'h',
        },
      });
      const [ev] = await w.waitFor(1);
      expect(ev!.type).toBe('ADDED');
      expect(ev!.object).toMatchObject({
        apiVersion: 'events.k8s.io/v1',
        metadata: { name: 'ident.rb' },
        regarding: { name: 'ident' },
        note: 'rolled back',
        reportingController: 'par-identity',
      });
    } finally {
      w.close();
    }
  });
});

describe('discovery and RBAC', () => {
  it('lists the events.k8s.io group and its events resource', async () => {
    const groups = (await call(emu, 'GET', '/apis')).body.groups as Array<{ name: string; preferredVersion: { groupVersion: string } }>;
    expect(groups.find((g) => g.name === 'events.k8s.io')?.preferredVersion.groupVersion).toBe('events.k8s.io/v1');
    const resources = (await call(emu, 'GET', '/apis/events.k8s.io/v1')).body.resources as Array<{
      name: string;
      namespaced: boolean;
      kind: string;
      verbs: string[];
    }>;
    expect(resources).toEqual([
      expect.objectContaining({
        name: 'events',
        namespaced: true,
        kind: 'Event',
        verbs: expect.arrayContaining(['create', 'list', 'watch']),
      }),
    ]);
  });

  it('needs create on events in the events.k8s.io group, not only in the core group', async () => {
    const denied = await call(emu, 'POST', EV1, { token: 'no-events', body: newEvent(ident, 'IdentityRotated') });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'events.events.k8s.io is forbidden: User "system:serviceaccount:ns1:rotator" cannot create resource "events" in API group "events.k8s.io" in the namespace "ns1"',
    );
    expect((await call(emu, 'POST', EV1, { token: 'core-events-only', body: newEvent(ident, 'IdentityRotated') })).status).toBe(403);
    expect((await call(emu, 'POST', EV1, { token: 'events-writer', body: newEvent(ident, 'IdentityRotated') })).status).toBe(201);
  });
});

describe.skipIf(!kubectlPath && !kubectlRequired)('kubectl reads the Events', () => {
  let dir: string;
  let kubectl: ReturnType<typeof kubectlIn>;
  beforeAll(async () => {
    expect(kubectlPath, 'kubectl must be on PATH when CI=true').toBeTruthy();
    dir = await mkdtemp(join(tmpdir(), 'kube-events-'));
    const cfg = join(dir, 'admin.yaml');
    await emu.writeKubeconfig(cfg, { namespace: 'ns1' });
    kubectl = kubectlIn(dir, cfg);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const rows = (out: string) =>
    out
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s{2,}/));

  it('kubectl get events selects by reason (JSON: the fake serves no server-side tables)', async () => {
    const run = await kubectl(['get', 'events', '--field-selector', 'reason=IdentityRotated', '-o', 'json']);
    expect(run.stderr).toBe('');
    const items = (
      JSON.parse(run.stdout) as {
        items: { type: string; reason: string; involvedObject: { kind: string; name: string }; message: string }[];
      }
    ).items;
    expect(items.length).toBeGreaterThanOrEqual(1);
    for (const e of items)
      expect([e.type, e.reason, `${e.involvedObject.kind}/${e.involvedObject.name}`, e.message]).toEqual([
        'Normal',
        'IdentityRotated',
        'Secret/ident',
        'IdentityRotated happened',
      ]);
  });

  it('kubectl events --for secret/NAME shows only that Secret’s Events', async () => {
    const run = await kubectl(['events', '--for', 'secret/ident']);
    expect(run.stderr).toBe('');
    const [header, ...body] = rows(run.stdout);
    expect(header).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
    expect(new Set(body.map((r) => r[3]))).toEqual(new Set(['Secret/ident']));
    expect(body.map((r) => r[2]).sort()).toEqual(expect.arrayContaining(['IdentityRotated', 'IdentityRolledBack']));
    const asked = emu.requests.find((r) => r.path === CORE && (r.query['fieldSelector'] ?? '').includes('involvedObject.name=ident'));
    expect(asked?.status).toBe(200);
  });

  it('kubectl describe deployment ends with the workload’s Events', async () => {
    const run = await kubectl(['describe', 'deployment', 'web']);
    expect(run.stderr).toBe('');
    const events = run.stdout.slice(run.stdout.indexOf('\nEvents:'));
    expect(events).toMatch(/Normal\s+RolloutStarted\s+\S+\s+par-identity\s+RolloutStarted happened/);
    expect(events).toMatch(/Warning\s+RolloutFailed\s+\S+\s+par-identity\s+RolloutFailed happened/);
    expect(events).toMatch(/Normal\s+ScalingReplicaSet\s+\S+ \(x3 over \S+\)\s+deployment-controller\s+Scaled up replica set web-1 to 2/);
    expect(events).not.toContain('IdentityRotated');
  });

  it('kubectl get events.events.k8s.io -o json serves the events.k8s.io/v1 form', async () => {
    const run = await kubectl(['get', 'events.events.k8s.io', '--field-selector', 'regarding.name=ident', '-o', 'json']);
    expect(run.stderr).toBe('');
    const list = JSON.parse(run.stdout) as { items: Array<{ apiVersion: string; regarding: { name: string } }> };
    expect(list.items.length).toBeGreaterThan(0);
    for (const item of list.items) {
      expect(item.apiVersion).toBe('events.k8s.io/v1');
      expect(item.regarding.name).toBe('ident');
    }
  });
});
