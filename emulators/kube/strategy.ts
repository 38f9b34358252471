import { normalizeCoreEvent } from './event-versions.js';
import type { KindInfo } from './kinds.js';
import type { KubeObject } from './types.js';

type Obj = Record<string, unknown>;

function ensure(obj: Obj, key: string): Obj {
  const cur = obj[key];
  if (cur && typeof cur === 'object' && !Array.isArray(cur)) return cur as Obj;
  const fresh: Obj = {};
  obj[key] = fresh;
  return fresh;
}

/**
 * Secret.stringData is write-only: the v1→internal conversion folds it into data (stringData
 * wins on key clashes), so it is never stored or returned.
 */
function foldStringData(obj: KubeObject): void {
  const sd = obj['stringData'];
  if (sd && typeof sd === 'object') {
    const data = ensure(obj, 'data') as Record<string, string>;
    for (const [k, v] of Object.entries(sd as Record<string, unknown>)) {
      data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    }
  }
  delete obj['stringData'];
}

/** The scheme defaulting functions that matter to our callers (not the full set). */
export function applyDefaults(info: KindInfo, obj: KubeObject): void {
  switch (info.kind) {
    case 'Secret':
      foldStringData(obj);
      // SetDefaults_Secret treats an empty type (as protobuf clients send it) as unset.
      if (!obj['type']) obj['type'] = 'Opaque';
      break;
    case 'Event':
      normalizeCoreEvent(obj);
      break;
    case 'Namespace':
      ensure(obj, 'spec');
      // The apiserver stamps this immutable label on every namespace (since 1.21).
      obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': obj.metadata.name ?? '' };
      break;
    // Workloads get none of the scheme's defaults: the fake stores them as written (a test that needs
    // a strategy or a replica count states it; the real apiserver's defaults are tested on it).
  }
}

/** PrepareForCreate: status written by clients on create is reset for kinds owned by controllers. */
export function prepareForCreate(info: KindInfo, obj: KubeObject): void {
  switch (info.kind) {
    case 'Namespace': {
      const spec = ensure(obj, 'spec');
      const finalizers = Array.isArray(spec['finalizers']) ? (spec['finalizers'] as string[]) : [];
      if (!finalizers.includes('kubernetes')) finalizers.push('kubernetes');
      spec['finalizers'] = finalizers;
      obj['status'] = { phase: 'Active' };
      break;
    }
    case 'Pod':
      obj['status'] = { phase: 'Pending' };
      break;
    case 'Deployment':
    case 'DaemonSet':
    case 'ReplicaSet':
    case 'Job':
    case 'CronJob':
      obj['status'] = {};
      break;
  }
}

/** Status-only kinds keep their stored status on main-resource writes; for Namespace, also the phase. */
export function keepStatus(info: KindInfo, next: KubeObject, old: KubeObject): void {
  if (!info.hasStatus) return;
  if (old['status'] === undefined) delete next['status'];
  else next['status'] = structuredClone(old['status']);
}

/** ResetObjectMetaForStatus plus "everything but status comes from the stored object". */
export function statusOnly(next: KubeObject, old: KubeObject): KubeObject {
  const merged = structuredClone(old);
  if (next['status'] === undefined) delete merged['status'];
  else merged['status'] = structuredClone(next['status']);
  merged.metadata.resourceVersion = next.metadata.resourceVersion;
  return merged;
}
