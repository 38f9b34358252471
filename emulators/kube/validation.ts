import { CORE_EVENT_FIELDS, EVENTS_V1_FIELDS, validateEvent } from './event-versions.js';
import { validateRbac } from './rbac-objects.js';
import type { KindInfo } from './kinds.js';
import { badRequest, FieldError, invalid } from './status-errors.js';
import type { KubeObject } from './types.js';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const MAX_SECRET_BYTES = 1024 * 1024;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/**
 * Where Go's encoding/json would reject a []byte field: the index of the first byte that is
 * not standard padded base64, or the start of an incomplete final quantum. -1 when valid.
 * Go ignores \r and \n inside base64 input.
 */
export function base64ErrorOffset(text: string): number {
  let quantum = 0;
  let quantumStart = 0;
  let padding = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\r' || ch === '\n') continue;
    if (quantum === 0) quantumStart = i;
    if (ch === '=') {
      if (quantum < 2) return i;
      padding++;
    } else if (/[A-Za-z0-9+/]/.test(ch)) {
      if (padding > 0) return i;
    } else return i;
    quantum++;
    if (quantum === 4) {
      quantum = 0;
      if (padding > 0) {
        const rest = text.slice(i + 1).replace(/[\r\n]/g, '');
        if (rest.length > 0) return i + 1;
      }
      padding = 0;
    }
  }
  if (quantum !== 0) return quantumStart;
  return -1;
}

/** Secret.data is []byte in Go, so bad base64 fails while decoding the request: a 400, not a 422. */
export function checkSecretEncoding(obj: KubeObject): void {
  const data = obj['data'];
  if (data === undefined || data === null) return;
  if (typeof data !== 'object' || Array.isArray(data))
    throw badRequest(
      `Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal ${Array.isArray(data) ? 'array' : typeof data} into Go struct field Secret.data of type map[string][]uint8`,
    );
  for (const v of Object.values(data as Record<string, unknown>)) {
    if (v === null) continue;
    if (typeof v !== 'string')
      throw badRequest(
        `Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal ${typeof v} into Go struct field Secret.data of type []uint8`,
      );
    const at = base64ErrorOffset(v);
    if (at >= 0) throw badRequest(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${at}`);
  }
}

function validateName(info: KindInfo, obj: KubeObject, errs: FieldError[]): void {
  const name = obj.metadata.name;
  if (!name) {
    errs.push(new FieldError('FieldValueRequired', 'metadata.name', 'name or generateName is required'));
    return;
  }
  const label = info.kind === 'Namespace';
  const re = label ? DNS1123_LABEL : DNS1123_SUBDOMAIN;
  const max = label ? 63 : 253;
  if (!re.test(name)) errs.push(new FieldError('FieldValueInvalid', 'metadata.name', label ? LABEL_MSG : SUBDOMAIN_MSG, name));
  if (name.length > max) errs.push(new FieldError('FieldValueInvalid', 'metadata.name', `must be no more than ${max} characters`, name));
}

function validateStringMap(field: string, value: unknown, errs: FieldError[]): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'object' || Array.isArray(value)) {
    errs.push(new FieldError('FieldValueInvalid', field, 'must be a map of strings'));
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') errs.push(new FieldError('FieldValueInvalid', `${field}.${k}`, 'must be a string'));
  }
}

function validateDataKeys(field: string, data: unknown, errs: FieldError[]): void {
  if (!data || typeof data !== 'object') return;
  for (const key of Object.keys(data)) {
    if (!CONFIG_KEY.test(key) || key.length > 253) errs.push(new FieldError('FieldValueInvalid', `${field}[${key}]`, CONFIG_KEY_MSG, key));
    else if (key === '.' || key === '..' || key.startsWith('..'))
      errs.push(new FieldError('FieldValueInvalid', `${field}[${key}]`, key === '.' ? "must not be '.'" : "must not be '..'", key));
  }
}

function secretSize(data: Record<string, string>): number {
  let total = 0;
  for (const v of Object.values(data)) total += Buffer.from(v, 'base64').length;
  return total;
}

/** Validation after defaulting, as the registry strategies' Validate / ValidateUpdate do. */
export function validate(info: KindInfo, obj: KubeObject, old?: KubeObject): void {
  const errs: FieldError[] = [];
  validateName(info, obj, errs);
  validateStringMap('metadata.labels', obj.metadata.labels, errs);
  validateStringMap('metadata.annotations', obj.metadata.annotations, errs);
  if (old && old.metadata.namespace !== obj.metadata.namespace)
    errs.push(new FieldError('FieldValueInvalid', 'metadata.namespace', 'field is immutable', obj.metadata.namespace ?? ''));
  switch (info.kind) {
    case 'Secret': {
      validateDataKeys('data', obj['data'], errs);
      const data = (obj['data'] ?? {}) as Record<string, string>;
      if (secretSize(data) > MAX_SECRET_BYTES) {
        errs.push(new FieldError('FieldValueTooLong', 'data', `must have at most ${MAX_SECRET_BYTES} bytes`));
      }
      if (old) {
        if (old['type'] !== obj['type'])
          errs.push(new FieldError('FieldValueInvalid', 'type', 'field is immutable', obj['type'] as string));
        if (old['immutable'] === true) {
          if (JSON.stringify(old['data'] ?? {}) !== JSON.stringify(obj['data'] ?? {}))
            errs.push(new FieldError('FieldValueForbidden', 'data', 'field is immutable when `immutable` is set'));
          if (obj['immutable'] !== true)
            errs.push(new FieldError('FieldValueForbidden', 'immutable', 'field is immutable when `immutable` is set'));
        }
      }
      break;
    }
    case 'ConfigMap': {
      validateDataKeys('data', obj['data'], errs);
      validateDataKeys('binaryData', obj['binaryData'], errs);
      validateStringMap('data', obj['data'], errs);
      if (old?.['immutable'] === true) {
        if (
          JSON.stringify(old['data'] ?? {}) !== JSON.stringify(obj['data'] ?? {}) ||
          JSON.stringify(old['binaryData'] ?? {}) !== JSON.stringify(obj['binaryData'] ?? {})
        )
          errs.push(new FieldError('FieldValueForbidden', 'data', 'field is immutable when `immutable` is set'));
      }
      break;
    }
    // Workloads (Deployment, DaemonSet, ReplicaSet, ControllerRevision, Pod, Job, CronJob) are stored
    // as written: their validation is the real apiserver's, tested on the real control plane.
    case 'Deployment':
    case 'DaemonSet':
    case 'ReplicaSet':
    case 'ControllerRevision':
    case 'Pod':
    case 'Job':
    case 'CronJob':
      break;
    case 'Event':
      validateEvent(obj, info.group === 'events.k8s.io', errs);
      break;
    default:
      validateRbac(info.kind, obj, old, errs);
  }
  if (errs.length > 0) throw invalid(info, obj.metadata.name ?? '', errs);
}

const META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

const TOP_FIELDS: Record<string, string[]> = {
  Secret: ['data', 'stringData', 'type', 'immutable'],
  ConfigMap: ['data', 'binaryData', 'immutable'],
  Event: CORE_EVENT_FIELDS,
  'Event.events.k8s.io': EVENTS_V1_FIELDS,
  ControllerRevision: ['data', 'revision'],
  ServiceAccount: ['secrets', 'imagePullSecrets', 'automountServiceAccountToken'],
  Role: ['rules'],
  ClusterRole: ['rules', 'aggregationRule'],
  RoleBinding: ['subjects', 'roleRef'],
  ClusterRoleBinding: ['subjects', 'roleRef'],
};

/**
 * Unknown top-level and metadata fields, as strict decoding names them. Deeper levels are not
 * checked: the emulator carries no schemas.
 */
export function unknownFields(info: KindInfo, body: Record<string, unknown>): string[] {
  const allowed = new Set([
    'apiVersion',
    'kind',
    'metadata',
    ...(TOP_FIELDS[info.group ? `${info.kind}.${info.group}` : info.kind] ?? TOP_FIELDS[info.kind] ?? ['spec', 'status']),
  ]);
  const out = Object.keys(body).filter((k) => !allowed.has(k));
  const meta = body['metadata'];
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) {
    for (const k of Object.keys(meta)) if (!META_FIELDS.has(k)) out.push(`metadata.${k}`);
  }
  return out;
}
