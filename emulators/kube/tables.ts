import type { KindInfo } from './kinds.js';
import type { KubeObject } from './types.js';

type Cell = string | number | boolean;
type Obj = Record<string, unknown>;
interface Column {
  name: string;
  type: string;
  format?: string;
  description: string;
  priority: number;
  value: (o: Obj) => Cell;
}

/** Reads a nested field of a decoded object; undefined when any step is missing. */
function dig(o: unknown, ...keys: string[]): unknown {
  let cur = o;
  for (const k of keys) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Obj)[k];
  }
  return cur;
}
const str = (o: unknown, ...keys: string[]): string => {
  const v = dig(o, ...keys);
  return v === undefined || v === null ? '' : String(v);
};
const num = (o: unknown, ...keys: string[]): number => Number(dig(o, ...keys) ?? 0) || 0;
const arr = (o: unknown, ...keys: string[]): Obj[] => {
  const v = dig(o, ...keys);
  return Array.isArray(v) ? (v as Obj[]) : [];
};

/** kubectl's duration.HumanDuration, which the server-side printers use for AGE. */
function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (h < 24 * 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

const name: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
  value: (o) => str(o, 'metadata', 'name'),
};
const age: Column = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  value: (o) => {
    const ts = str(o, 'metadata', 'creationTimestamp');
    return ts ? humanDuration(Date.now() - Date.parse(ts)) : '<unknown>';
  },
};
const col = (n: string, type: string, value: Column['value'], priority = 0): Column => ({ name: n, type, description: n, priority, value });
const count = (v: unknown): number => (v && typeof v === 'object' ? Object.keys(v).length : 0);

function columnsFor(info: KindInfo): Column[] {
  switch (info.kind) {
    case 'Secret':
      return [name, col('Type', 'string', (o) => str(o, 'type')), col('Data', 'string', (o) => count(o['data'])), age];
    case 'ConfigMap':
      return [name, col('Data', 'string', (o) => count(o['data']) + count(o['binaryData'])), age];
    case 'Namespace':
      return [name, col('Status', 'string', (o) => str(o, 'status', 'phase')), age];
    case 'Pod':
      return [
        name,
        col('Ready', 'string', (o) => `${arr(o, 'status', 'containerStatuses').filter((c) => c['ready'] === true).length}/${arr(o, 'spec', 'containers').length}`),
        col('Status', 'string', (o) => (str(o, 'metadata', 'deletionTimestamp') ? 'Terminating' : str(o, 'status', 'phase'))),
        col('Restarts', 'string', (o) => arr(o, 'status', 'containerStatuses').reduce((n, c) => n + num(c, 'restartCount'), 0)),
        age,
        col('Node', 'string', (o) => str(o, 'spec', 'nodeName') || '<none>', 1),
      ];
    case 'Node':
      return [
        name,
        col('Status', 'string', (o) => {
          const ready = arr(o, 'status', 'conditions').find((c) => c['type'] === 'Ready');
          const base = ready?.['status'] === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
          return dig(o, 'spec', 'unschedulable') === true ? `${base},SchedulingDisabled` : base;
        }),
        col('Roles', 'string', (o) => {
          const roles = Object.keys((dig(o, 'metadata', 'labels') as Obj | undefined) ?? {})
            .filter((k) => k.startsWith('node-role.kubernetes.io/'))
            .map((k) => k.slice('node-role.kubernetes.io/'.length));
          return roles.length ? roles.join(',') : '<none>';
        }),
        age,
        col('Version', 'string', (o) => str(o, 'status', 'nodeInfo', 'kubeletVersion')),
      ];
    case 'Deployment':
      return [
        name,
        col('Ready', 'string', (o) => `${num(o, 'status', 'readyReplicas')}/${num(o, 'spec', 'replicas')}`),
        col('Up-to-date', 'integer', (o) => num(o, 'status', 'updatedReplicas')),
        col('Available', 'integer', (o) => num(o, 'status', 'availableReplicas')),
        age,
      ];
    case 'DaemonSet':
      return [
        name,
        col('Desired', 'integer', (o) => num(o, 'status', 'desiredNumberScheduled')),
        col('Current', 'integer', (o) => num(o, 'status', 'currentNumberScheduled')),
        col('Ready', 'integer', (o) => num(o, 'status', 'numberReady')),
        col('Up-to-date', 'integer', (o) => num(o, 'status', 'updatedNumberScheduled')),
        col('Available', 'integer', (o) => num(o, 'status', 'numberAvailable')),
        age,
      ];
    case 'ReplicaSet':
      return [
        name,
        col('Desired', 'integer', (o) => num(o, 'spec', 'replicas')),
        col('Current', 'integer', (o) => num(o, 'status', 'replicas')),
        col('Ready', 'integer', (o) => num(o, 'status', 'readyReplicas')),
        age,
      ];
    case 'Job':
      return jobColumns();
    case 'Event':
      return eventColumns();
    default:
      return [name, age];
  }
}

/** printJob: NAME, STATUS, COMPLETIONS, DURATION, AGE. */
function jobColumns(): Column[] {
  const has = (o: Obj, type: string) => arr(o, 'status', 'conditions').some((c) => c['type'] === type && c['status'] === 'True');
  const status = (o: Obj): string => {
    if (has(o, 'Complete')) return 'Complete';
    if (has(o, 'Failed')) return 'Failed';
    if (str(o, 'metadata', 'deletionTimestamp')) return 'Terminating';
    if (has(o, 'Suspended')) return 'Suspended';
    if (has(o, 'FailureTarget')) return 'FailureTarget';
    return 'Running';
  };
  const completions = (o: Obj): string => {
    const succeeded = num(o, 'status', 'succeeded');
    const want = dig(o, 'spec', 'completions');
    if (typeof want === 'number') return `${succeeded}/${want}`;
    const parallelism = num(o, 'spec', 'parallelism');
    return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
  };
  const duration = (o: Obj): string => {
    const start = str(o, 'status', 'startTime');
    if (!start) return '';
    const end = str(o, 'status', 'completionTime');
    return humanDuration((end ? Date.parse(end) : Date.now()) - Date.parse(start));
  };
  return [name, col('Status', 'string', status), col('Completions', 'string', completions), col('Duration', 'string', duration), age];
}

/**
 * The apiserver's Event printer (printEvent): LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, and in wide
 * output SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME. Rows may be in either API version's form.
 */
function eventColumns(): Column[] {
  const either = (o: Obj, core: string, v1: string): unknown => o[core] ?? o[v1];
  const ref = (o: Obj): Obj => (either(o, 'involvedObject', 'regarding') ?? {}) as Obj;
  const since = (ts: unknown): string => (typeof ts === 'string' && ts ? humanDuration(Date.now() - Date.parse(ts)) : '<unknown>');
  const lastSeen = (o: Obj): unknown => dig(o, 'series', 'lastObservedTime') ?? either(o, 'lastTimestamp', 'deprecatedLastTimestamp') ?? o['eventTime'];
  const firstSeen = (o: Obj): unknown => either(o, 'firstTimestamp', 'deprecatedFirstTimestamp') ?? o['eventTime'];
  const source = (o: Obj): string => {
    const s = (either(o, 'source', 'deprecatedSource') ?? {}) as Obj;
    const component = String(s['component'] || either(o, 'reportingComponent', 'reportingController') || '');
    const host = String(s['host'] || o['reportingInstance'] || '');
    return host ? `${component}, ${host}` : component;
  };
  return [
    col('Last Seen', 'string', (o) => since(lastSeen(o))),
    col('Type', 'string', (o) => str(o, 'type')),
    col('Reason', 'string', (o) => str(o, 'reason')),
    col('Object', 'string', (o) => `${String(ref(o)['kind'] ?? '').toLowerCase()}/${String(ref(o)['name'] ?? '')}`),
    col('Subobject', 'string', (o) => String(ref(o)['fieldPath'] ?? ''), 1),
    col('Source', 'string', (o) => source(o), 1),
    col('Message', 'string', (o) => String(either(o, 'message', 'note') ?? '')),
    col('First Seen', 'string', (o) => since(firstSeen(o)), 1),
    col('Count', 'string', (o) => Number(dig(o, 'series', 'count') ?? either(o, 'count', 'deprecatedCount') ?? 1) || 1, 1),
    { ...name, priority: 1 },
  ];
}

/** Whether the Accept header asks for meta.k8s.io Table output (kubectl's human-readable get). */
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '').split(',')[0]!.replace(/\s+/g, '').includes('as=Table');
}

function rowObject(obj: KubeObject, includeObject: string): unknown {
  if (includeObject === 'None') return undefined;
  if (includeObject === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

export function toTable(
  info: KindInfo,
  objects: KubeObject[],
  opts: { includeObject: string; resourceVersion?: string; withColumns?: boolean },
): Record<string, unknown> {
  const columns = columnsFor(info);
  const metadata: Record<string, unknown> = {};
  if (opts.resourceVersion) metadata['resourceVersion'] = opts.resourceVersion;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions:
      opts.withColumns === false
        ? null
        : columns.map(({ value: _v, format, ...c }) => ({ ...c, format: format ?? '' })),
    rows: objects.map((o) => {
      const row: Record<string, unknown> = { cells: columns.map((c) => c.value(o as Obj)) };
      const object = rowObject(o, opts.includeObject);
      if (object !== undefined) row['object'] = object;
      return row;
    }),
  };
}
