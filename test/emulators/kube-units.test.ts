import { describe, expect, it } from 'vitest';
import { jsonPatch, mergePatch, strategicMergePatch } from '../../emulators/kube/patch.js';
import { decodeProtobuf } from '../../emulators/kube/protobuf.js';
import { labelsMatch, parseFieldSelector, parseLabelSelector } from '../../emulators/kube/selectors.js';
import { ApiError } from '../../emulators/kube/status-errors.js';
import { base64ErrorOffset } from '../../emulators/kube/validation.js';

describe('base64 checks (Go encoding/json []byte rules)', () => {
  it('accepts padded standard base64 and ignores newlines', () => {
    for (const ok of ['', 'YQ==', 'YWI=', 'YWJj', 'YWJj\nZGVm', 'YWJj\r\nZA==']) expect(base64ErrorOffset(ok)).toBe(-1);
  });
  it('reports the offset Go reports', () => {
    expect(base64ErrorOffset('admin')).toBe(4);
    expect(base64ErrorOffset('YWJ')).toBe(0);
    expect(base64ErrorOffset('YW-j')).toBe(2);
    expect(base64ErrorOffset('YQ==YQ==')).toBe(4);
    expect(base64ErrorOffset('Y===')).toBe(1);
    expect(base64ErrorOffset('YWJj_')).toBe(4);
  });
});

describe('selectors', () => {
  it('parses and evaluates set-based label selectors', () => {
    const reqs = parseLabelSelector('env in (prod,staging),tier!=db,!legacy,app');
    expect(reqs.map((r) => r.op)).toEqual(['in', '!=', '!', 'exists']);
    expect(labelsMatch(reqs, { env: 'prod', tier: 'web', app: 'x' })).toBe(true);
    expect(labelsMatch(reqs, { env: 'prod', tier: 'web', app: 'x', legacy: '1' })).toBe(false);
    expect(labelsMatch(reqs, { env: 'dev', app: 'x' })).toBe(false);
    expect(labelsMatch(parseLabelSelector('replicas>2'), { replicas: '3' })).toBe(true);
  });
  it('rejects malformed selectors with a 400', () => {
    const err = (() => {
      try {
        parseLabelSelector('a b c');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(400);
    expect(() => parseFieldSelector('metadata.name')).toThrow(ApiError);
  });
  it('unescapes field selector values', () => {
    expect(parseFieldSelector('metadata.name=a\\,b,status.phase!=Running')).toEqual([
      { field: 'metadata.name', op: '=', value: 'a,b' },
      { field: 'status.phase', op: '!=', value: 'Running' },
    ]);
  });
});

describe('patches', () => {
  it('merge patch replaces lists wholesale', () => {
    expect(mergePatch({ a: [1, 2], b: { c: 1, d: 2 } }, { a: [3], b: { d: null } })).toEqual({ a: [3], b: { c: 1 } });
  });
  it('strategic merge honours $patch replace, $retainKeys and $deleteFromPrimitiveList', () => {
    const target = {
      metadata: { finalizers: ['a', 'b'] },
      spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } }, template: { spec: { containers: [{ name: 'x', image: 'i' }] } } },
    };
    const out = strategicMergePatch(target, {
      metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] },
      spec: {
        strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null },
        template: { spec: { containers: [{ name: 'y', image: 'j' }, { $patch: 'replace' }] } },
      },
    });
    expect(out).toEqual({
      metadata: { finalizers: ['b'] },
      spec: { strategy: { type: 'Recreate' }, template: { spec: { containers: [{ name: 'y', image: 'j' }] } } },
    });
  });
  it('json patch supports move, copy and the end-of-array index', () => {
    expect(
      jsonPatch({ a: { b: 1 }, list: [1] }, [
        { op: 'copy', from: '/a/b', path: '/c' },
        { op: 'move', from: '/a', path: '/moved' },
        { op: 'add', path: '/list/-', value: 2 },
      ]),
    ).toEqual({ c: 1, moved: { b: 1 }, list: [1, 2] });
    expect(() => jsonPatch({}, [{ op: 'remove', path: '/nope' }])).toThrow(/missing/);
  });
});

/** Minimal protobuf writer: length-delimited and varint fields only. */
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}
const ld = (no: number, payload: Buffer | string) => {
  const b = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return Buffer.concat([varint((no << 3) | 2), varint(b.length), b]);
};
const vi = (no: number, n: number) => Buffer.concat([varint(no << 3), varint(n)]);
const envelope = (apiVersion: string, kind: string, raw: Buffer) =>
  Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), ld(1, Buffer.concat([ld(1, apiVersion), ld(2, kind)])), ld(2, raw)]);

describe('protobuf request bodies', () => {
  it('decodes a Secret with metadata, data and labels', () => {
    const meta = Buffer.concat([ld(1, 'p'), ld(3, 'ns'), ld(11, Buffer.concat([ld(1, 'app'), ld(2, 'x')])), ld(14, 'f/one')]);
    const raw = Buffer.concat([ld(1, meta), ld(2, Buffer.concat([ld(1, 'k'), ld(2, Buffer.from([0, 255]))])), ld(3, 'Opaque'), vi(5, 1)]);
    expect(decodeProtobuf(envelope('v1', 'Secret', raw))).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'p', namespace: 'ns', labels: { app: 'x' }, finalizers: ['f/one'] },
      data: { k: Buffer.from([0, 255]).toString('base64') },
      type: 'Opaque',
      immutable: true,
    });
  });
  it('decodes DeleteOptions with preconditions', () => {
    const raw = Buffer.concat([vi(1, 0), ld(2, Buffer.concat([ld(1, 'uid-1'), ld(2, '42')])), ld(4, 'Background'), ld(5, 'All')]);
    expect(decodeProtobuf(envelope('v1', 'DeleteOptions', raw))).toEqual({
      gracePeriodSeconds: 0,
      preconditions: { uid: 'uid-1', resourceVersion: '42' },
      propagationPolicy: 'Background',
      dryRun: ['All'],
    });
  });
  it('decodes a Job as kubectl create job sends it: zero pointers kept, zero scalars and empty times dropped', () => {
    const container = Buffer.concat([
      ld(1, 'rotate'),
      ld(2, 'img:1'),
      ld(4, 'a'),
      ld(4, ''),
      ld(5, ''),
      ld(7, Buffer.concat([ld(1, 'NS'), ld(3, ld(1, Buffer.concat([ld(1, 'v1'), ld(2, 'metadata.namespace')])))])),
      ld(8, Buffer.concat([ld(1, Buffer.concat([ld(1, 'memory'), ld(2, ld(1, '256Mi'))])), ld(2, Buffer.concat([ld(1, 'cpu'), ld(2, ld(1, '50m'))]))])),
      vi(16, 0),
    ]);
    const podSpec = Buffer.concat([ld(2, container), ld(3, 'Never'), ld(8, 'runner'), vi(11, 0)]);
    const template = Buffer.concat([ld(1, Buffer.concat([ld(8, Buffer.alloc(0)), ld(11, Buffer.concat([ld(1, 'app'), ld(2, 'x')]))])), ld(2, podSpec)]);
    const owner = Buffer.concat([ld(1, 'CronJob'), ld(3, 'cj'), ld(4, 'uid-1'), ld(5, 'batch/v1'), vi(6, 1)]);
    const meta = Buffer.concat([ld(1, 'manual'), ld(3, 'datadog'), vi(7, 0), ld(8, Buffer.alloc(0)), ld(12, Buffer.concat([ld(1, 'cronjob.kubernetes.io/instantiate'), ld(2, 'manual')])), ld(13, owner)]);
    const spec = Buffer.concat([vi(7, 0), ld(6, template), vi(3, 1800)]);
    expect(decodeProtobuf(envelope('batch/v1', 'Job', Buffer.concat([ld(1, meta), ld(2, spec), ld(3, Buffer.alloc(0))])))).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'manual',
        namespace: 'datadog',
        annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' },
        ownerReferences: [{ kind: 'CronJob', name: 'cj', uid: 'uid-1', apiVersion: 'batch/v1', controller: true }],
      },
      spec: {
        backoffLimit: 0,
        activeDeadlineSeconds: 1800,
        template: {
          metadata: { labels: { app: 'x' } },
          spec: {
            containers: [
              {
                name: 'rotate',
                image: 'img:1',
                args: ['a', ''],
                env: [{ name: 'NS', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } }],
                resources: { limits: { memory: '256Mi' }, requests: { cpu: '50m' } },
              },
            ],
            restartPolicy: 'Never',
            serviceAccountName: 'runner',
          },
        },
      },
      status: {},
    });
  });
  it('refuses a field the schema does not know with 415 instead of dropping it', () => {
    expect(() => decodeProtobuf(envelope('v1', 'ServiceAccount', Buffer.concat([ld(1, ld(1, 'sa')), ld(99, 'x')])))).toThrow(
      /cannot decode field 99 of core\/v1.ServiceAccount/,
    );
    const token = decodeProtobuf(envelope('authentication.k8s.io/v1', 'TokenRequest', ld(2, Buffer.concat([ld(1, 'aud'), vi(4, 600)]))));
    expect(token).toEqual({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['aud'], expirationSeconds: 600 } });
  });
  it('refuses kinds it has no field map for with 415, and non-protobuf bytes with 400', () => {
    expect(() => decodeProtobuf(envelope('apps/v1', 'Deployment', Buffer.alloc(0)))).toThrow(/only for Secret/);
    expect(() => decodeProtobuf(Buffer.from('{}'))).toThrow(/does not appear to be a protobuf message/);
  });
});
