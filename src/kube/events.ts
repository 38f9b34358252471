import { hostname as osHostname } from 'node:os';
import type { EventsV1Api, EventsV1Event } from '@kubernetes/client-node';
import type { ClusterConnection } from './cluster-connection.js';
import { apiStatus } from './kube-errors.js';
import { sanitizeServerString } from '../sanitize.js';
import { isoString } from '../time/index.js';

// The audit trail in the cluster: one events.k8s.io/v1 Event per rotation, rollback and rollout
// step, on the Secret or the workload, so `kubectl events --for secret/NAME` and `kubectl describe
// deployment` show who changed which identity. Best effort by design: an Event that cannot be
// written (no RBAC, API trouble) is a warning for the caller to print, never a failure, because
// the change it describes has already happened.

const REPORTING_CONTROLLER = 'par-identity';

export const EventReason = {
  IdentityRotated: 'IdentityRotated',
  IdentityRolledBack: 'IdentityRolledBack',
  RolloutStarted: 'RolloutStarted',
  RolloutCompleted: 'RolloutCompleted',
  RolloutFallback: 'RolloutFallback',
  RolloutFailed: 'RolloutFailed',
} as const;
export type EventReasonName = (typeof EventReason)[keyof typeof EventReason];

/** The object an Event is about (an ObjectReference). */
interface EventSubject {
  kind: string;
  apiVersion: string;
  namespace: string;
  name: string;
  uid?: string;
}

export interface RecordEventInput {
  regarding: EventSubject;
  reason: EventReasonName;
  /** Human text; sanitised and cut to the API's 1024 characters. Build it with identityNote() where identities are involved. */
  note: string;
  type: 'Normal' | 'Warning';
  /** Machine-readable verb: Rotate, Rollback, Rollout, Fallback. */
  action: string;
  related?: EventSubject;
}

interface RecordEventOptions {
  /** reportingInstance; the host's name when omitted (cut to the API's 128 characters). */
  instance?: string;
  now?: () => Date;
}

export type RecordEventResult =
  | { recorded: true; name: string; namespace: string }
  | { recorded: false; reason: EventReasonName; forbidden: boolean; warning: string };

/** The one call we make, so tests and callers can pass a client-node EventsV1Api or a fake. */
// exported for tests: the tests pass a fake of this shape
export type EventsWriter = Pick<EventsV1Api, 'createNamespacedEvent'>;

const NOTE_LIMIT = 1024;
const INSTANCE_LIMIT = 128;
const FIELD_LIMIT = 128;

/** Event text: sanitised (it holds server and config text), and within the apiserver's byte limit. */
const eventText = (text: string, limit: number) => sanitizeServerString(text, limit, { fit: true });

/** Key material has no business in an Event: PEM blocks and private JWK members are refused outright. */
function looksLikeKeyMaterial(text: string): boolean {
  return /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text) || /"d"\s*:\s*"/.test(text) || /[A-Za-z0-9+/=_-]{100,}/.test(text);
}

const FINGERPRINT = /^[A-Za-z0-9_-]{43}$/;
const URN = /^urn:dd:apps:on-prem-runner:[^:\s]+:-?\d+:[^:\s]+$/;

function show(value: string | undefined, shape: RegExp): string {
  if (!value) return 'none';
  return shape.test(value) ? value : '(not a valid value)';
}

export interface IdentitySummary {
  urn?: string;
  fingerprint?: string;
}

/**
 * The note for an identity change: new and previous URN and RFC 7638 fingerprint, nothing else.
 * Values that do not look like a URN or a fingerprint are not echoed (they could be anything).
 */
// exported for tests: the note's wording, checked alone
export function identityNote(verb: string, current: IdentitySummary, previous: IdentitySummary, extra?: string): string {
  const parts = [
    `${verb}: fingerprint ${show(current.fingerprint, FINGERPRINT)} (urn ${show(current.urn, URN)})`,
    `previous fingerprint ${show(previous.fingerprint, FINGERPRINT)} (urn ${show(previous.urn, URN)})`,
  ];
  if (extra) parts.push(extra);
  return eventText(parts.join('; '), NOTE_LIMIT);
}

/**
 * The Event for a Secret rotation or rollback, ready for recordEvent: on the Secret, with the
 * identity note. `current` is what the Secret holds now, `previous` what it held before.
 */
export function secretIdentityEvent(
  change: 'rotated' | 'rolled back',
  secret: { namespace: string; name: string; uid?: string },
  current: IdentitySummary,
  previous: IdentitySummary,
  extra?: string,
): RecordEventInput {
  const rotated = change === 'rotated';
  return {
    regarding: {
      kind: 'Secret',
      apiVersion: 'v1',
      namespace: secret.namespace,
      name: secret.name,
      ...(secret.uid ? { uid: secret.uid } : {}),
    },
    reason: rotated ? EventReason.IdentityRotated : EventReason.IdentityRolledBack,
    action: rotated ? 'Rotate' : 'Rollback',
    type: 'Normal',
    note: identityNote(rotated ? 'identity rotated' : 'identity rolled back', current, previous, extra),
  };
}

function reference(s: EventSubject) {
  return { kind: s.kind, apiVersion: s.apiVersion, namespace: s.namespace, name: s.name, ...(s.uid ? { uid: s.uid } : {}) };
}

/** metav1.MicroTime wants exactly six fractional digits (toISOString gives three, which the apiserver refuses). */
// exported for tests: MicroTime's six digits, checked without an apiserver
export function microTime(date: Date): string {
  return isoString(date).replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Like client-go's events recorder: the regarding object's name and a hex timestamp. */
function eventName(subject: EventSubject, date: Date): string {
  const nanos = BigInt(date.getTime()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1_000_000));
  return `${subject.name.slice(0, 200)}.${nanos.toString(16)}`;
}

async function writerFor(target: ClusterConnection | EventsWriter): Promise<EventsWriter> {
  if ('createNamespacedEvent' in target) return target;
  const k8s = await import('./client-node-api.js');
  return target.client(k8s.EventsV1Api);
}

// exported for tests: the Event's fields, checked without an apiserver
export function buildEvent(input: RecordEventInput, options: RecordEventOptions = {}): EventsV1Event {
  const now = (options.now ?? (() => new Date()))();
  const note = eventText(input.note, NOTE_LIMIT);
  const instance = eventText(options.instance ?? osHostname(), INSTANCE_LIMIT) || 'unknown';
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: eventName(input.regarding, now), namespace: input.regarding.namespace },
    // A string on purpose: client-node passes it through as is (V1MicroTime has no serializer).
    eventTime: microTime(now) as unknown as Date,
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: instance,
    action: eventText(input.action, FIELD_LIMIT),
    reason: input.reason,
    type: input.type,
    note: looksLikeKeyMaterial(note) ? '(note withheld: it looked like key material)' : note,
    regarding: reference(input.regarding),
    ...(input.related ? { related: reference(input.related) } : {}),
  };
}

/**
 * Posts one events.k8s.io/v1 Event. Never throws: a 403 (no `create` on events.events.k8s.io)
 * and any other failure come back as a warning the caller prints.
 */
export async function recordEvent(
  target: ClusterConnection | EventsWriter,
  input: RecordEventInput,
  options: RecordEventOptions = {},
): Promise<RecordEventResult> {
  const where = `${input.regarding.kind} ${input.regarding.namespace}/${input.regarding.name}`;
  try {
    const body = buildEvent(input, options);
    const writer = await writerFor(target);
    const created = await writer.createNamespacedEvent({ namespace: input.regarding.namespace, body });
    return { recorded: true, name: created.metadata?.name ?? body.metadata!.name!, namespace: input.regarding.namespace };
  } catch (err) {
    const { code, status } = apiStatus(err);
    if (code === 403) {
      return {
        recorded: false,
        reason: input.reason,
        forbidden: true,
        warning:
          `Event ${input.reason} not recorded on ${where}: forbidden. Grant create on events (API group events.k8s.io) ` +
          `in namespace ${input.regarding.namespace} to keep an audit trail in the cluster.`,
      };
    }
    const said = status?.message ?? (err instanceof Error ? err.message.split('\n')[0] : String(err));
    return {
      recorded: false,
      reason: input.reason,
      forbidden: false,
      warning: eventText(`Event ${input.reason} not recorded on ${where}: ${code ? `HTTP ${code} ` : ''}${said}`, 512),
    };
  }
}
