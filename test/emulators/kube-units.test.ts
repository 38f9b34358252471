import { describe, expect, it } from 'vitest';
import { jsonPatch, mergePatch, strategicMergePatch } from '../../emulators/kube/patch.js';
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
      spec: {
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } },
        template: { spec: { containers: [{ name: 'x', image: 'i' }] } },
      },
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
