import { isDeepStrictEqual } from 'node:util';
import { badRequest, failure } from './status-errors.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** RFC 7386: objects merge recursively, null deletes, everything else (arrays too) replaces. */
export function mergePatch(target: unknown, patch: unknown): Json {
  if (!isObject(patch)) return clone(patch as Json);
  const out: JsonObject = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * patchMergeKey tags of the Go types we serve. Keyed by field name (and parent field where the
 * same name means different things), which is precise enough for core/v1 and apps/v1.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  imagePullSecrets: 'name',
  conditions: 'type',
  ownerReferences: 'uid',
  hostAliases: 'ip',
  addresses: 'type',
  resourceClaims: 'name',
  taints: 'key',
};

/** Lists of scalars with patchStrategy "merge": patches add to them instead of replacing. */
function isPrimitiveMergeList(parent: string | undefined, field: string): boolean {
  return field === 'finalizers' && parent === 'metadata';
}

function mergeKeyFor(field: string): string | undefined {
  return Object.hasOwn(MERGE_KEYS, field) ? MERGE_KEYS[field] : undefined;
}

function smpMergeList(original: Json[], patch: Json[], key: string, field: string): Json[] {
  if (patch.some((p) => isObject(p) && p['$patch'] === 'replace')) {
    return patch.filter((p) => !(isObject(p) && p['$patch'] === 'replace')).map((p) => stripDirectives(p));
  }
  const out = original.map((o) => clone(o));
  for (const item of patch) {
    if (!isObject(item)) {
      throw badRequest(`unable to find api field in struct for the list ${field}: expected an object with merge key ${key}`);
    }
    const keyValue = item[key];
    if (keyValue === undefined) throw failure(422, 'Invalid', `map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const at = out.findIndex((o) => isObject(o) && isDeepStrictEqual(o[key], keyValue));
    if (item['$patch'] === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (at >= 0) out[at] = smpMergeMap(out[at] as JsonObject, item, field);
    else out.push(stripDirectives(item));
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, val] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    if (k.startsWith('$setElementOrder/') || k.startsWith('$deleteFromPrimitiveList/')) continue;
    out[k] = stripDirectives(val);
  }
  return out;
}

function smpMergeMap(original: JsonObject | undefined, patch: JsonObject, parent: string | undefined): JsonObject {
  const directive = patch['$patch'];
  if (directive === 'replace') return stripDirectives(patch) as JsonObject;
  const out: JsonObject = isObject(original) ? clone(original) : {};
  const retain = patch['$retainKeys'];
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const current = out[field];
      if (Array.isArray(current) && Array.isArray(v)) out[field] = current.filter((x) => !v.some((d) => isDeepStrictEqual(d, x)));
      continue;
    }
    if (k.startsWith('$')) continue;
    if (v === null) {
      delete out[k];
      continue;
    }
    if (isObject(v)) {
      if (v['$patch'] === 'delete') {
        delete out[k];
        continue;
      }
      out[k] = smpMergeMap(isObject(out[k]) ? (out[k] as JsonObject) : undefined, v, k);
      continue;
    }
    if (Array.isArray(v)) {
      const key = mergeKeyFor(k);
      const current = Array.isArray(out[k]) ? (out[k] as Json[]) : [];
      if (key) out[k] = smpMergeList(current, v, key, k);
      else if (isPrimitiveMergeList(parent, k)) {
        const merged = current.slice();
        for (const x of v) if (!merged.some((m) => isDeepStrictEqual(m, x))) merged.push(x);
        out[k] = merged;
      } else out[k] = stripDirectives(v);
      continue;
    }
    out[k] = v;
  }
  if (Array.isArray(retain)) {
    for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  }
  return out;
}

/** Strategic merge patch for the fields of core/v1 and apps/v1 objects: keyed lists merge, maps merge, null deletes. */
export function strategicMergePatch(target: unknown, patch: unknown): Json {
  if (!isObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
  return smpMergeMap(isObject(target) ? target : {}, patch, undefined);
}

interface JsonPatchOp {
  op: string;
  path: string;
  value?: Json;
  from?: string;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw invalidPatch(`invalid JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function invalidPatch(message: string) {
  return failure(422, 'Invalid', message);
}

function resolveParent(doc: Json, tokens: string[], path: string): { parent: Json; last: string } {
  let cur: Json = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) {
      const i = Number(t);
      if (!/^\d+$/.test(t) || i >= cur.length) throw invalidPatch(`doc is missing path: "${path}": missing value`);
      cur = cur[i]!;
    } else if (isObject(cur)) {
      if (!(t in cur)) throw invalidPatch(`doc is missing path: "${path}": missing value`);
      cur = cur[t]!;
    } else throw invalidPatch(`doc is missing path: "${path}": missing value`);
  }
  return { parent: cur, last: tokens[tokens.length - 1]! };
}

function getAt(doc: Json, path: string): Json {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return doc;
  const { parent, last } = resolveParent(doc, tokens, path);
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!/^\d+$/.test(last) || i >= parent.length) throw invalidPatch(`doc is missing path: "${path}": missing value`);
    return parent[i]!;
  }
  if (isObject(parent) && last in parent) return parent[last]!;
  throw invalidPatch(`doc is missing path: "${path}": missing value`);
}

function addAt(doc: Json, path: string, value: Json): Json {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const { parent, last } = resolveParent(doc, tokens, path);
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    if (!(last === '-' || /^\d+$/.test(last)) || i > parent.length)
      throw invalidPatch(`add operation does not apply: doc is missing path: "${path}": missing value`);
    parent.splice(i, 0, value);
  } else if (isObject(parent)) parent[last] = value;
  else throw invalidPatch(`add operation does not apply: doc is missing path: "${path}": missing value`);
  return doc;
}

function removeAt(doc: Json, path: string): Json {
  const tokens = parsePointer(path);
  const { parent, last } = resolveParent(doc, tokens, path);
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!/^\d+$/.test(last) || i >= parent.length)
      throw invalidPatch(`remove operation does not apply: doc is missing path: "${path}": missing value`);
    parent.splice(i, 1);
  } else if (isObject(parent) && last in parent) delete parent[last];
  else throw invalidPatch(`remove operation does not apply: doc is missing path: "${path}": missing value`);
  return doc;
}

/** RFC 6902. */
export function jsonPatch(target: unknown, ops: unknown): Json {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = clone(target as Json);
  for (const raw of ops as JsonPatchOp[]) {
    if (!isObject(raw as unknown) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw badRequest('the server rejected our request due to an error in our request');
    }
    switch (raw.op) {
      case 'add':
        doc = addAt(doc, raw.path, clone(raw.value ?? null));
        break;
      case 'remove':
        doc = removeAt(doc, raw.path);
        break;
      case 'replace':
        getAt(doc, raw.path);
        doc = removeAt(doc, raw.path);
        doc = addAt(doc, raw.path, clone(raw.value ?? null));
        break;
      case 'move': {
        const v = clone(getAt(doc, raw.from ?? ''));
        doc = removeAt(doc, raw.from ?? '');
        doc = addAt(doc, raw.path, v);
        break;
      }
      case 'copy':
        doc = addAt(doc, raw.path, clone(getAt(doc, raw.from ?? '')));
        break;
      case 'test': {
        let actual: Json | undefined;
        try {
          actual = getAt(doc, raw.path);
        } catch {
          actual = undefined;
        }
        if (!isDeepStrictEqual(actual, raw.value ?? null)) throw invalidPatch(`testing value ${raw.path} failed: test failed`);
        break;
      }
      default:
        throw badRequest(`Unexpected kind: ${raw.op}`);
    }
  }
  return doc;
}

export function applyPatch(type: PatchType, target: unknown, patch: unknown): Json {
  switch (type) {
    case 'application/json-patch+json':
      return jsonPatch(target, patch);
    case 'application/merge-patch+json':
    case 'application/apply-patch+yaml':
      return mergePatch(target, patch);
    case 'application/strategic-merge-patch+json':
      return strategicMergePatch(target, patch);
  }
}
