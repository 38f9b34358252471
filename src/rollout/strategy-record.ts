import type { V1DaemonSet, V1Deployment } from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { staleReason } from '../storage/lock.js';
import { procStartOf } from '../storage/pid.js';
import { isoString } from '../time/index.js';
import type { LeftoverReport, StrategyFields } from '../results/rotation.js';
import type { Workload } from './eligibility.js';
import type { WorkloadKind } from './workload-ref.js';

// The record a rollout leaves on the workload while it has changed its update strategy
// (docs/rollout.md "What a killed rollout leaves"): the original strategy, the strategy it set, when,
// and which process. It is written in the same patch that changes the strategy and removed in the
// patch that restores it, so no instant has the strategy changed and the original unrecorded. A run
// killed in between (SIGKILL: OOM, a Job's deadline, eviction) leaves the record, and the next
// `rollout` restores from it; `rollout --check` and `status --pods` report it.

export const ORIGINAL_STRATEGY_ANNOTATION = 'par-identity.datadoghq.com/original-strategy';

/** After its deadline, a rollout has restored (or is gone): its record is a leftover, whatever the host. */
const RESTORE_MARGIN_MS = 60_000;

type IntOrString = number | string;

export interface StrategyRecord {
  v: 1;
  kind: WorkloadKind;
  original: StrategyFields;
  changed: StrategyFields;
  /** When the strategy was changed (ISO 8601 UTC, seconds). */
  at: string;
  host: string;
  pid: number;
  procStart?: number;
  /** The run's deadline plus a margin for its restore: after it, the run is over whatever the host. */
  until: string;
}

export function strategyOf(kind: WorkloadKind, w: Workload): StrategyFields {
  const s = kind === 'deployment' ? (w as V1Deployment).spec?.strategy : (w as V1DaemonSet).spec?.updateStrategy;
  const ru = s?.rollingUpdate as { maxSurge?: IntOrString; maxUnavailable?: IntOrString } | undefined;
  return { type: s?.type ?? null, maxSurge: ru?.maxSurge ?? null, maxUnavailable: ru?.maxUnavailable ?? null };
}

/** The strategy part of a patch (`{ spec: { strategy | updateStrategy } }`) as fields. */
export function strategyOfPatch(kind: WorkloadKind, patch: object): StrategyFields {
  return strategyOf(kind, patch as Workload);
}

const same = (a: IntOrString | null, b: IntOrString | null) => (a === null ? b === null : b !== null && String(a) === String(b));
export const sameStrategy = (a: StrategyFields, b: StrategyFields) =>
  (a.type ?? 'RollingUpdate') === (b.type ?? 'RollingUpdate') && same(a.maxSurge, b.maxSurge) && same(a.maxUnavailable, b.maxUnavailable);

export function describeStrategy(s: StrategyFields): string {
  if (s.type && s.type !== 'RollingUpdate') return `type ${s.type}`;
  return `maxSurge ${s.maxSurge ?? '(default)'}, maxUnavailable ${s.maxUnavailable ?? '(default)'}`;
}

export function newRecord(
  kind: WorkloadKind,
  original: StrategyFields,
  changed: StrategyFields,
  now: Date,
  deadlineMs: number,
): StrategyRecord {
  const procStart = procStartOf(process.pid);
  const seconds = (d: Date) => isoString(d).replace(/\.\d{3}Z$/, 'Z');
  return {
    v: 1,
    kind,
    original,
    changed,
    at: seconds(now),
    host: hostname(),
    pid: process.pid,
    ...(procStart !== undefined ? { procStart } : {}),
    until: seconds(new Date(deadlineMs + RESTORE_MARGIN_MS)),
  };
}

// Anyone who may patch the workload may write this annotation: a value of any other form than the one
// written here is "not a record of ours", reported and never acted on (its text never reaches the terminal).
const INT_OR_PERCENT = /^(0|[1-9]\d{0,5})%?$/;
const TYPES = new Set(['RollingUpdate', 'Recreate', 'OnDelete']);
const HOST = /^[A-Za-z0-9._-]{1,255}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

function fieldsOf(value: unknown): StrategyFields | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  const intOrString = (x: unknown) =>
    x === null ||
    (typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 && x < 1e6) ||
    (typeof x === 'string' && INT_OR_PERCENT.test(x));
  if (!(v['type'] === null || (typeof v['type'] === 'string' && TYPES.has(v['type'])))) return undefined;
  if (!intOrString(v['maxSurge']) || !intOrString(v['maxUnavailable'])) return undefined;
  return {
    type: v['type'] as string | null,
    maxSurge: v['maxSurge'] as IntOrString | null,
    maxUnavailable: v['maxUnavailable'] as IntOrString | null,
  };
}

/** The record on `w`: undefined when there is none, 'unreadable' when the annotation is not one we wrote. */
// exported for tests: unreadable annotations, checked without a workload API
export function readRecord(kind: WorkloadKind, w: Workload): StrategyRecord | 'unreadable' | undefined {
  const raw = w.metadata?.annotations?.[ORIGINAL_STRATEGY_ANNOTATION];
  if (raw === undefined) return undefined;
  if (raw.length > 4096) return 'unreadable';
  try {
    const v = JSON.parse(raw) as Record<string, unknown>;
    const original = fieldsOf(v['original']);
    const changed = fieldsOf(v['changed']);
    const ok =
      v['v'] === 1 &&
      v['kind'] === kind &&
      original &&
      changed &&
      typeof v['at'] === 'string' &&
      TIME.test(v['at']) &&
      typeof v['until'] === 'string' &&
      TIME.test(v['until']) &&
      typeof v['host'] === 'string' &&
      HOST.test(v['host']) &&
      Number.isSafeInteger(v['pid']) &&
      (v['pid'] as number) > 0 &&
      (v['procStart'] === undefined || Number.isSafeInteger(v['procStart']));
    if (!ok) return 'unreadable';
    return {
      v: 1,
      kind,
      original,
      changed,
      at: v['at'] as string,
      host: v['host'] as string,
      pid: v['pid'] as number,
      ...(v['procStart'] !== undefined ? { procStart: v['procStart'] as number } : {}),
      until: v['until'] as string,
    };
  } catch {
    return 'unreadable';
  }
}

/** What a record on the workload means now, and what `rollout` does about it. */
export type Leftover =
  | { state: 'none' }
  /** An annotation of that name that is not one we wrote: reported, never acted on; a surge overwrites it. */
  | { state: 'unreadable'; message: string }
  /** Its run may still be going (same host: its process runs; another host: its deadline is ahead): never touched. */
  | { state: 'in-progress'; record: StrategyRecord; current: StrategyFields; message: string }
  /** Its run is over and the strategy is still as it set it: `rollout` restores the original. */
  | { state: 'interrupted'; record: StrategyRecord; current: StrategyFields; message: string; why: string }
  /** Its run is over and someone changed the strategy since: their change is left; `rollout` drops the record. */
  | { state: 'changed-since'; record: StrategyRecord; current: StrategyFields; message: string; why: string };

interface HolderView {
  now: Date;
  /** This machine's host name (os.hostname() when unset). */
  host?: string;
  /** Why the recorded process no longer runs (same host only), or undefined; storage/lock's rule by default. */
  gone?: (record: StrategyRecord, host: string) => string | undefined;
}

const goneByLockRule = (record: StrategyRecord, host: string) =>
  record.pid === process.pid && record.host === host ? undefined : staleReason(record, host);

export function assessLeftover(kind: WorkloadKind, w: Workload, view: HolderView): Leftover {
  const record = readRecord(kind, w);
  if (record === undefined) return { state: 'none' };
  if (record === 'unreadable') {
    return {
      state: 'unreadable',
      message: `annotation ${ORIGINAL_STRATEGY_ANNOTATION} is not one par-identity wrote: ignored (a surge of this rollout replaces it)`,
    };
  }
  const current = strategyOf(kind, w);
  const original = describeStrategy(record.original);
  const host = view.host ?? hostname();
  const gone = (view.gone ?? goneByLockRule)(record, host);
  const overdue = view.now.getTime() > Date.parse(record.until);
  if (!gone && !overdue) {
    return {
      state: 'in-progress',
      record,
      current,
      message:
        `strategy changed by a par-identity rollout in progress since ${record.at} (pid ${record.pid} on ${record.host}, ` +
        `its deadline ${record.until}; original: ${original}; now: ${describeStrategy(current)})`,
    };
  }
  const why = gone ?? `its deadline passed at ${record.until}`;
  if (sameStrategy(current, record.changed)) {
    return {
      state: 'interrupted',
      record,
      current,
      why,
      message: `strategy changed by an interrupted par-identity rollout at ${record.at} (original: ${original}; now: ${describeStrategy(current)}; ${why})`,
    };
  }
  return {
    state: 'changed-since',
    record,
    current,
    why,
    message:
      `strategy was changed by an interrupted par-identity rollout at ${record.at} (original: ${original}) ` +
      `and changed since by someone else (now: ${describeStrategy(current)}): left as it is`,
  };
}

/**
 * `{ metadata: { resourceVersion, annotations } }` merged into a strategic-merge patch: the write fails
 * with 409 if the workload changed since `resourceVersion`.
 */
export function guarded(patch: object, resourceVersion: string | undefined, annotations: Record<string, string | null>): object {
  return { ...patch, metadata: { ...(resourceVersion ? { resourceVersion } : {}), annotations } };
}

export type { LeftoverReport, StrategyFields };

export function leftoverReport(l: Exclude<Leftover, { state: 'none' }>, action: LeftoverReport['action']): LeftoverReport {
  if (l.state === 'unreadable') return { state: l.state, message: l.message, action };
  return {
    state: l.state,
    message: l.message,
    changedAt: l.record.at,
    by: { host: l.record.host, pid: l.record.pid },
    original: l.record.original,
    changed: l.record.changed,
    current: l.current,
    action,
  };
}
