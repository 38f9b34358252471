import type { Status } from './status-errors.js';

/** The parts of a request a fault can match on. */
export interface FaultRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection. */
  verb: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  user: string;
}

interface RequestMatcher {
  method?: string;
  /** Exact path or a RegExp tested against it. */
  path?: string | RegExp;
  verb?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  predicate?: (req: FaultRequest) => boolean;
}

interface FaultHandle {
  /** Matching requests affected so far. */
  readonly hits: number;
  /** Stops the fault from affecting later requests. */
  cancel(): void;
}

interface FailOptions {
  /** How many matching requests fail (default 1). */
  times?: number;
  /** HTTP code (default 500). */
  code?: number;
  reason?: string;
  message?: string;
  /** Replaces the Status body entirely. */
  body?: unknown;
  /** Sent as it is instead of a JSON body (a 200 that is not JSON, as a proxy or a broken server answers). */
  rawBody?: string;
  /** Headers sent with the failure, e.g. `{ 'Retry-After': '20' }` on a 429 as the apiserver's priority and fairness sends. */
  headers?: Record<string, string>;
  /**
   * The request is served (and a write applied) first; then the client gets the failure instead of
   * the real answer (`reset`: the connection is dropped) — an outcome the client cannot know.
   */
  afterApply?: boolean | 'reset';
}

interface Rule {
  kind: 'fail' | 'delay' | 'before' | 'hang';
  matcher: RequestMatcher;
  remaining: number;
  hits: number;
  fail?: FailOptions;
  delayMs?: number;
  fn?: (req: FaultRequest) => void | Promise<void>;
  /** Requests held by a 'hang' rule, released when it is cancelled or the faults are cleared. */
  held?: Array<() => void>;
}

function matches(m: RequestMatcher, r: FaultRequest): boolean {
  if (m.method && m.method.toUpperCase() !== r.method.toUpperCase()) return false;
  if (m.path !== undefined) {
    if (typeof m.path === 'string' ? m.path !== r.path : !m.path.test(r.path)) return false;
  }
  if (m.verb !== undefined && m.verb !== r.verb) return false;
  if (m.resource !== undefined && m.resource !== r.resource) return false;
  if (m.subresource !== undefined && m.subresource !== r.subresource) return false;
  if (m.namespace !== undefined && m.namespace !== r.namespace) return false;
  if (m.name !== undefined && m.name !== r.name) return false;
  if (m.predicate && !m.predicate(r)) return false;
  return true;
}

/** Scripted misbehaviour for tests: failures, latency, dropped watches and interleaved writers. */
export class FaultController {
  private rules: Rule[] = [];
  private watchDropper: () => number = () => 0;
  private watchEnder: () => number = () => 0;
  private watchInjector: (text: string) => number = () => 0;

  /** Fails the next `times` matching requests with a Status (500 InternalError unless told otherwise). */
  failNext(matcher: RequestMatcher, opts: FailOptions = {}): FaultHandle {
    return this.add({ kind: 'fail', matcher, remaining: opts.times ?? 1, hits: 0, fail: opts });
  }

  /** Delays matching requests by `ms` before they are processed; `times` defaults to every match until cancelled. */
  delay(matcher: RequestMatcher, ms: number, opts: { times?: number } = {}): FaultHandle {
    return this.add({ kind: 'delay', matcher, remaining: opts.times ?? Number.POSITIVE_INFINITY, hits: 0, delayMs: ms });
  }

  /** Runs `fn` (awaited) right before the next matching request is processed, e.g. to write through the store in between a client's read and write. */
  beforeNext(matcher: RequestMatcher, fn: (req: FaultRequest) => void | Promise<void>): FaultHandle {
    return this.add({ kind: 'before', matcher, remaining: 1, hits: 0, fn });
  }

  /**
   * Matching requests get no answer at all, not even headers, as from a hung apiserver; `times`
   * defaults to every match. They are held until the fault is cancelled, the faults are cleared or
   * the emulator closes (which cuts their connections).
   */
  hang(matcher: RequestMatcher, opts: { times?: number } = {}): FaultHandle {
    return this.add({ kind: 'hang', matcher, remaining: opts.times ?? Number.POSITIVE_INFINITY, hits: 0, held: [] });
  }

  /** Abruptly ends every open watch stream (no terminating chunk). Returns how many were dropped. */
  dropWatches(): number {
    return this.watchDropper();
  }

  /** Ends every open watch stream cleanly, as the apiserver does when a watch times out. Returns how many. */
  endWatches(): number {
    return this.watchEnder();
  }

  /**
   * Writes `lines` as they are (each followed by a newline) into every open watch stream, as a
   * broken or hostile apiserver might: text that is not JSON, events of another kind or for another
   * object, events with fields missing, ERROR events. Returns how many streams got them.
   */
  injectWatchLines(...lines: Array<string | object>): number {
    return this.watchInjector(lines.map((l) => `${typeof l === 'string' ? l : JSON.stringify(l)}\n`).join(''));
  }

  clear(): void {
    for (const r of this.rules) this.release(r);
    this.rules = [];
    for (const r of this.hanging) this.release(r);
    this.hanging.clear();
  }

  /** Rules whose held requests are still waiting (a 'hang' rule leaves `rules` when its times run out). */
  private readonly hanging = new Set<Rule>();

  private release(rule: Rule): void {
    for (const resume of rule.held?.splice(0) ?? []) resume();
  }

  /** @internal wired by the server. */
  setWatchControls(drop: () => number, end: () => number, inject: (text: string) => number = () => 0): void {
    this.watchDropper = drop;
    this.watchEnder = end;
    this.watchInjector = inject;
  }

  private add(rule: Rule): FaultHandle {
    this.rules.push(rule);
    return {
      get hits() {
        return rule.hits;
      },
      cancel: () => {
        this.rules = this.rules.filter((r) => r !== rule);
        this.release(rule);
        this.hanging.delete(rule);
      },
    };
  }

  private take(kind: Rule['kind'], req: FaultRequest): Rule[] {
    const hit = this.rules.filter((r) => r.kind === kind && r.remaining > 0 && matches(r.matcher, req));
    for (const r of hit) {
      r.remaining--;
      r.hits++;
    }
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return hit;
  }

  /** @internal Runs hooks and delays; returns the failure to answer with, if any. */
  async apply(
    req: FaultRequest,
  ): Promise<{ code: number; body: unknown; raw?: string; afterApply?: boolean | 'reset'; headers?: Record<string, string> } | undefined> {
    for (const r of this.take('before', req)) await r.fn!(req);
    for (const r of this.take('hang', req)) {
      this.hanging.add(r);
      await new Promise<void>((resume) => r.held!.push(resume));
    }
    const failing = this.take('fail', req)[0];
    let waitMs = 0;
    for (const r of this.take('delay', req)) waitMs += r.delayMs!;
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    if (!failing) return undefined;
    const f = failing.fail!;
    const code = f.code ?? 500;
    const after = { ...(f.afterApply ? { afterApply: f.afterApply } : {}), ...(f.headers ? { headers: f.headers } : {}) };
    if (f.rawBody !== undefined) return { code, body: undefined, raw: f.rawBody, ...after };
    if (f.body !== undefined) return { code, body: f.body, ...after };
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: f.message ?? (code === 500 ? 'Internal error occurred: injected fault' : `injected fault (${code})`),
      reason: f.reason ?? defaultReason(code),
      code,
    };
    return { code, body: status, ...after };
  }
}

function defaultReason(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'InternalError';
  }
}
