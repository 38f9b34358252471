/**
 * Scripted misbehaviour: per route, a queue of steps consumed one per request, then normal
 * behaviour again. Steps are validated up front so a typo in a demo script fails at `script`
 * time instead of silently answering normally.
 */
import { isRoute, type Route } from './routes.js';

export interface FaultStep {
  /**
   * Status to answer with (default 200, 307 for a redirect, 429 when retryAfter is set). Alone,
   * a 2xx gets a success-shaped body that registers no runner; other statuses get
   * {"errors":["<reason phrase>"]}.
   */
  status?: number;
  /** Raw response body (sent as application/json unless headers override it). */
  body?: string;
  /** Added to the response, including a passThrough one. */
  headers?: Record<string, string>;
  /** Wait before answering; with nothing else in the step the request is then handled normally. */
  delayMs?: number;
  /** Retry-After value, seconds or an HTTP date, sent verbatim. */
  retryAfter?: string;
  /** Redirect to the same path and query on otherHostUrl. */
  redirectToOtherHost?: boolean;
  /** Stream a body of this many bytes, chunked with no Content-Length. */
  oversizeBytes?: number;
  /** A 200 (or `status`) whose body is not JSON. */
  invalidJson?: boolean;
  /** A success-shaped body whose data.type is not createRunnerResponse. Enrollment routes only. */
  wrongType?: boolean;
  /** A success-shaped body whose runner_id contains ':' (would break the URN). Enrollment routes only. */
  runnerIdWithColon?: boolean;
  /**
   * A JSON:API error body (status default 400) that repeats the request as received: its headers (the
   * API and application keys, a signed runner token) and its body, as a careless or hostile server
   * does in its error messages.
   */
  echoRequest?: boolean;
  /** Send the status line, headers and part of the body, then destroy the socket. */
  dropConnection?: boolean;
  /** Handle the request normally (after delayMs). */
  passThrough?: boolean;
}

/** At most one of these decides what the body is. */
const BODY_KINDS = ['body', 'redirectToOtherHost', 'oversizeBytes', 'invalidJson', 'echoRequest', 'dropConnection'] as const;
const BOOLEAN_KEYS = [
  'redirectToOtherHost',
  'invalidJson',
  'echoRequest',
  'wrongType',
  'runnerIdWithColon',
  'dropConnection',
  'passThrough',
] as const;
const KNOWN_KEYS = new Set<string>(['status', 'body', 'headers', 'delayMs', 'retryAfter', 'oversizeBytes', ...BOOLEAN_KEYS]);
const MAX_DELAY_MS = 10 * 60 * 1000;
const MAX_OVERSIZE_BYTES = 1024 * 1024 * 1024;

/** True when the step answers the request itself instead of letting it through. */
export function answersItself(step: FaultStep): boolean {
  if (step.passThrough) return false;
  return (
    step.status !== undefined ||
    step.retryAfter !== undefined ||
    step.wrongType === true ||
    step.runnerIdWithColon === true ||
    BODY_KINDS.some((k) => step[k] !== undefined && step[k] !== false)
  );
}

/** Short label for the request log. */
export function describeStep(step: FaultStep): string {
  const parts: string[] = [];
  if (step.passThrough || !answersItself(step)) parts.push('passThrough');
  if (step.delayMs) parts.push(`delay ${step.delayMs}ms`);
  if (step.dropConnection) parts.push('dropConnection');
  if (step.redirectToOtherHost) parts.push('redirectToOtherHost');
  if (step.oversizeBytes !== undefined) parts.push(`oversize ${step.oversizeBytes}B`);
  if (step.invalidJson) parts.push('invalidJson');
  if (step.echoRequest) parts.push('echoRequest');
  if (step.wrongType) parts.push('wrongType');
  if (step.runnerIdWithColon) parts.push('runnerIdWithColon');
  if (step.body !== undefined) parts.push('body');
  if (step.retryAfter !== undefined) parts.push(`Retry-After ${step.retryAfter}`);
  if (step.status !== undefined) parts.push(`status ${step.status}`);
  return parts.join(', ');
}

/** Checks one step (from code or from JSON) and returns it; throws a TypeError naming the problem. */
function parseFaultStep(route: Route, value: unknown, index = 0): FaultStep {
  const where = `fault step ${index} for route ${route}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`${where} must be an object`);
  const step = value as Record<string, unknown>;
  for (const key of Object.keys(step)) {
    if (!KNOWN_KEYS.has(key)) throw new TypeError(`${where}: unknown field ${JSON.stringify(key)}`);
  }
  const s = step['status'];
  if (s !== undefined && (typeof s !== 'number' || !Number.isInteger(s) || s < 100 || s > 599)) {
    throw new TypeError(`${where}: status must be an integer 100..599`);
  }
  if (step['body'] !== undefined && typeof step['body'] !== 'string') throw new TypeError(`${where}: body must be a string`);
  if (step['retryAfter'] !== undefined && typeof step['retryAfter'] !== 'string') {
    throw new TypeError(`${where}: retryAfter must be a string (seconds or an HTTP date)`);
  }
  const h = step['headers'];
  if (h !== undefined) {
    if (typeof h !== 'object' || h === null || Array.isArray(h)) throw new TypeError(`${where}: headers must be an object`);
    for (const [k, v] of Object.entries(h)) {
      if (typeof v !== 'string') throw new TypeError(`${where}: header ${k} must have a string value`);
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) || /[\r\n\0]/.test(v)) {
        throw new TypeError(`${where}: header ${JSON.stringify(k)} is not a valid header`);
      }
    }
  }
  const d = step['delayMs'];
  if (d !== undefined && (typeof d !== 'number' || !Number.isInteger(d) || d < 0 || d > MAX_DELAY_MS)) {
    throw new TypeError(`${where}: delayMs must be an integer 0..${MAX_DELAY_MS}`);
  }
  const o = step['oversizeBytes'];
  if (o !== undefined && (typeof o !== 'number' || !Number.isInteger(o) || o < 1 || o > MAX_OVERSIZE_BYTES)) {
    throw new TypeError(`${where}: oversizeBytes must be an integer 1..${MAX_OVERSIZE_BYTES}`);
  }
  for (const key of BOOLEAN_KEYS) {
    if (step[key] !== undefined && typeof step[key] !== 'boolean') throw new TypeError(`${where}: ${key} must be a boolean`);
  }
  const parsed = step as FaultStep;
  const kinds = BODY_KINDS.filter((k) => parsed[k] !== undefined && parsed[k] !== false);
  if (kinds.length > 1) throw new TypeError(`${where}: ${kinds.join(' and ')} cannot be combined`);
  const successShaped = parsed.wrongType || parsed.runnerIdWithColon;
  if (successShaped && kinds.length > 0) throw new TypeError(`${where}: wrongType/runnerIdWithColon cannot be combined with ${kinds[0]}`);
  if (successShaped && route !== 'enroll' && route !== 'enroll_api_key_only')
    throw new TypeError(`${where}: wrongType/runnerIdWithColon only apply to enrollment routes`);
  if (parsed.passThrough && answersItself({ ...parsed, passThrough: false })) {
    throw new TypeError(`${where}: passThrough cannot be combined with a status or body of its own`);
  }
  if (parsed.redirectToOtherHost && s !== undefined && ![301, 302, 303, 307, 308].includes(s as number)) {
    throw new TypeError(`${where}: a redirect needs a 3xx redirect status`);
  }
  return { ...parsed, ...(h ? { headers: { ...(h as Record<string, string>) } } : {}) };
}

export function parseScriptRequest(value: unknown): { route: Route; steps: FaultStep[] } {
  if (typeof value !== 'object' || value === null) throw new TypeError('expected {"route": ..., "steps": [...]}');
  const { route, steps } = value as { route?: unknown; steps?: unknown };
  if (!isRoute(route))
    throw new TypeError('route must be "enroll", "enroll_api_key_only", "health", "validate", "validate_keys" or "connections"');
  if (!Array.isArray(steps)) throw new TypeError('steps must be an array');
  return { route, steps: steps.map((s, i) => parseFaultStep(route, s, i)) };
}

export class FaultScript {
  readonly #queues = new Map<Route, FaultStep[]>();

  add(route: Route, steps: readonly FaultStep[]): void {
    // Validate all before queueing any, so a bad script leaves nothing half-queued.
    const parsed = steps.map((s, i) => parseFaultStep(route, s, i));
    const queue = this.#queues.get(route) ?? [];
    queue.push(...parsed);
    this.#queues.set(route, queue);
  }

  next(route: Route): FaultStep | undefined {
    return this.#queues.get(route)?.shift();
  }

  pending(route: Route): number {
    return this.#queues.get(route)?.length ?? 0;
  }

  clear(): void {
    this.#queues.clear();
  }
}
