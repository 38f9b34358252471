import { badRequest, FieldError } from './status-errors.js';
import type { KubeObject } from './types.js';

// One stored Event, two API views, as kube-apiserver keeps it: etcd holds the core form and
// events.k8s.io/v1 is a conversion of it (pkg/apis/events/v1/conversion.go):
//   regarding ⇄ involvedObject, note ⇄ message, reportingController ⇄ reportingComponent,
//   deprecatedSource ⇄ source, deprecatedFirstTimestamp/LastTimestamp/Count ⇄ first/lastTimestamp/count.
// Everything else (reason, type, action, eventTime, series, related, reportingInstance) is shared.

type Obj = Record<string, unknown>;

const CORE_ONLY = ['involvedObject', 'message', 'reportingComponent', 'source', 'firstTimestamp', 'lastTimestamp', 'count'];
const EVENTS_ONLY = [
  'regarding',
  'note',
  'reportingController',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
];
const SHARED = ['reason', 'type', 'action', 'eventTime', 'series', 'related', 'reportingInstance'];

export const EVENTS_V1_FIELDS = [...EVENTS_ONLY, ...SHARED];

function present(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '' && v !== 0;
}

/**
 * The core/v1 JSON shape the apiserver writes: struct fields without omitempty always appear
 * (involvedObject, source as {}; timestamps as null; reportingComponent/Instance as "").
 */
export function normalizeCoreEvent(obj: KubeObject): void {
  if (!obj['involvedObject'] || typeof obj['involvedObject'] !== 'object') obj['involvedObject'] = {};
  if (!obj['source'] || typeof obj['source'] !== 'object') obj['source'] = {};
  for (const k of ['firstTimestamp', 'lastTimestamp', 'eventTime']) if (obj[k] === undefined || obj[k] === '') obj[k] = null;
  for (const k of ['reportingComponent', 'reportingInstance']) if (typeof obj[k] !== 'string') obj[k] = '';
  if (!present(obj['count'])) delete obj['count'];
}

/** events.k8s.io/v1 body → the stored core form. */
export function eventsV1ToCore(obj: KubeObject): KubeObject {
  const out: KubeObject = { apiVersion: 'v1', kind: 'Event', metadata: obj.metadata };
  for (const k of SHARED) if (obj[k] !== undefined) out[k] = obj[k];
  out['involvedObject'] = obj['regarding'] ?? {};
  if (obj['note'] !== undefined) out['message'] = obj['note'];
  out['reportingComponent'] = obj['reportingController'] ?? '';
  out['source'] = obj['deprecatedSource'] ?? {};
  out['firstTimestamp'] = obj['deprecatedFirstTimestamp'] ?? null;
  out['lastTimestamp'] = obj['deprecatedLastTimestamp'] ?? null;
  if (present(obj['deprecatedCount'])) out['count'] = obj['deprecatedCount'];
  return out;
}

/** The stored core form → what events.k8s.io/v1 serves. */
export function coreToEventsV1(obj: KubeObject): KubeObject {
  const out: KubeObject = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: obj.metadata };
  out['eventTime'] = obj['eventTime'] ?? null;
  for (const k of SHARED) if (k !== 'eventTime' && present(obj[k])) out[k] = obj[k];
  if (present(obj['reportingComponent'])) out['reportingController'] = obj['reportingComponent'];
  out['regarding'] = obj['involvedObject'] ?? {};
  if (present(obj['message'])) out['note'] = obj['message'];
  out['deprecatedSource'] = obj['source'] ?? {};
  out['deprecatedFirstTimestamp'] = obj['firstTimestamp'] ?? null;
  out['deprecatedLastTimestamp'] = obj['lastTimestamp'] ?? null;
  if (present(obj['count'])) out['deprecatedCount'] = obj['count'];
  return out;
}

/** events.k8s.io/v1 field selector labels, mapped onto the stored core form (AddFieldLabelConversionsForEvent). */
export function eventsV1FieldLabels(path: (o: Obj, ...keys: string[]) => string): Record<string, (o: Obj) => string> {
  const labels: Record<string, (o: Obj) => string> = {
    reason: (o) => path(o, 'reason'),
    type: (o) => path(o, 'type'),
    reportingController: (o) => path(o, 'reportingComponent'),
  };
  for (const f of ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']) {
    labels[`regarding.${f}`] = (o) => path(o, 'involvedObject', f);
  }
  return labels;
}

const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LIMIT = 128;
const NOTE_LIMIT = 1024;

/**
 * ValidateEventCreate/Update on the stored form. `eventsApi` is true for events.k8s.io requests
 * (which must be "new" Events); core/v1 requests are validated the legacy way unless they set eventTime.
 */
export function validateEvent(obj: KubeObject, eventsApi: boolean, errs: FieldError[]): void {
  const involved = (obj['involvedObject'] ?? {}) as Obj;
  const involvedNs = String(involved['namespace'] ?? '');
  const ns = obj.metadata.namespace ?? '';
  const names = eventsApi
    ? { involved: 'regarding', controller: 'reportingController', message: 'note' }
    : { involved: 'involvedObject', controller: 'reportingComponent', message: 'message' };
  const hasTime = obj['eventTime'] !== null && obj['eventTime'] !== undefined;
  if (eventsApi && !hasTime) errs.push(new FieldError('FieldValueRequired', 'eventTime', ''));
  if (eventsApi && obj['type'] !== 'Normal' && obj['type'] !== 'Warning') {
    errs.push(new FieldError('FieldValueInvalid', 'type', 'has invalid value, must be Normal or Warning', obj['type'] ?? ''));
  }
  if (!eventsApi && !hasTime) {
    if (involvedNs === '' ? ns !== '' && ns !== 'default' : ns !== involvedNs) {
      errs.push(new FieldError('FieldValueInvalid', `${names.involved}.namespace`, 'does not match event.namespace', involvedNs));
    }
    return;
  }
  if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system') {
    errs.push(new FieldError('FieldValueInvalid', `${names.involved}.namespace`, 'does not match event.namespace', involvedNs));
  }
  const controller = String(obj['reportingComponent'] ?? '');
  if (!controller) errs.push(new FieldError('FieldValueRequired', names.controller, ''));
  else if (!QUALIFIED_NAME.test(controller) || controller.length > 316) {
    errs.push(
      new FieldError(
        'FieldValueInvalid',
        names.controller,
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        controller,
      ),
    );
  }
  for (const [field, value] of [
    ['reportingInstance', obj['reportingInstance']],
    ['action', obj['action']],
    ['reason', obj['reason']],
  ] as const) {
    const text = String(value ?? '');
    if (!text) errs.push(new FieldError('FieldValueRequired', field, ''));
    else if (text.length > LIMIT) errs.push(new FieldError('FieldValueInvalid', field, `can have at most ${LIMIT} characters`, text));
  }
  const message = String(obj['message'] ?? '');
  if (message.length > NOTE_LIMIT)
    errs.push(new FieldError('FieldValueInvalid', names.message, `can have at most ${NOTE_LIMIT} characters`, message));
}

/** Keys of a core/v1 Event body that strict decoding accepts. */
export const CORE_EVENT_FIELDS = [...CORE_ONLY, ...SHARED];

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

/**
 * metav1.MicroTime decodes with time.Parse(RFC3339Micro): exactly six fractional digits. A
 * JavaScript Date serialised by toISOString() (three digits) is refused while decoding: a 400.
 */
export function checkMicroTimes(obj: KubeObject, version: string): void {
  const series = obj['series'] as Obj | undefined;
  for (const value of [obj['eventTime'], series?.['lastObservedTime']]) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || !MICRO_TIME.test(value)) {
      throw badRequest(
        `Event in version "${version}" cannot be handled as a Event: parsing time ${JSON.stringify(String(value))} as "2006-01-02T15:04:05.000000Z07:00": cannot parse as RFC3339Micro`,
      );
    }
  }
}
