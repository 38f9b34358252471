import type { V1Secret } from '@kubernetes/client-node';
import { KubeApiStatus } from '../kube/kube-errors.js';
import { backoffDelay, type Clock, parseRetryAfter, type RetryPolicy } from '../time/index.js';
import type { SecretInformer, SecretInformerFactory } from './secret-informer.js';
import type { ListReason } from './watch-events.js';

// Keeps one informer running. ListWatch stops on any error other than 410: restart it after an
// exponential backoff with jitter (1 s … 30 s by default), reset once a watch stream carries an
// event again, or once a stream stayed open longer than the longest backoff (a quiet Secret sends
// nothing for hours: that watch was healthy, and its end starts over from the first delay). An
// answer's Retry-After (429, 503; header or Status details.retryAfterSeconds) is waited at least,
// up to MAX_RETRY_AFTER_MS. A full re-list on a fresh informer every `relistIntervalMs` is the
// backstop for a watch that died silently (a half-open TCP connection delivers nothing and reports
// nothing). docs/commands.md, `watch`.

export const DEFAULT_RELIST_INTERVAL_MS = 10 * 60_000;
/** The longest Retry-After obeyed: a server asking for more is asked again after a minute. */
const MAX_RETRY_AFTER_MS = 60_000;

/** What the failed answer asked for, in ms (capped), if it asked. */
function retryAfterOf(err: unknown, nowMs: number): number | undefined {
  if (!(err instanceof KubeApiStatus)) return undefined;
  let ms = parseRetryAfter(err.retryAfter, nowMs);
  if (ms === undefined) {
    const seconds = (err.body as { details?: { retryAfterSeconds?: unknown } }).details?.retryAfterSeconds;
    if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0) ms = seconds * 1000;
  }
  return ms === undefined ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

interface SupervisorListener {
  upsert(secret: V1Secret): void;
  deleted(secret: V1Secret): void;
  listed(secret: V1Secret | undefined, resourceVersion: string, reason: ListReason): void;
  activity(): void;
  ignored(reason: string): void;
  /** The informer stopped on `err`; it is restarted after `retryInMs`. */
  restarting(err: unknown, attempt: number, retryInMs: number): void;
}

interface SupervisorOptions {
  factory: SecretInformerFactory;
  listener: SupervisorListener;
  policy: RetryPolicy;
  clock: Clock;
  relistIntervalMs: number;
}

export class InformerSupervisor {
  private current: SecretInformer | undefined;
  private attempt = 0;
  /**
   * When a watch stream was first answered 200 since the last failure (cleared on each restart): a
   * watch re-opened quietly after a clean end (the apiserver's timeout) stays healthy from then on.
   */
  private streamOpenedAt: number | undefined;
  private nextListReason: ListReason = 'start';
  private stopped = false;
  private backoff: AbortController | undefined;
  /** One controller per wait: a long-lived signal would collect an abort listener per sleep. */
  private relistWait: AbortController | undefined;

  constructor(private readonly options: SupervisorOptions) {}

  start(): void {
    this.replace('start');
    void this.relistLoop();
  }

  /** Drops the current informer (and its cache) and lists again on a fresh one. */
  relist(reason: ListReason = 'periodic'): void {
    if (!this.stopped) this.replace(reason);
  }

  stop(): void {
    this.stopped = true;
    this.relistWait?.abort();
    this.backoff?.abort();
    this.current?.stop();
    this.current = undefined;
  }

  /** Consecutive failures since a watch stream last opened. */
  get failures(): number {
    return this.attempt;
  }

  private replace(reason: ListReason): void {
    this.current?.stop();
    this.backoff?.abort();
    this.backoff = undefined;
    this.nextListReason = reason;
    const { listener } = this.options;
    const live = () => !this.stopped && this.current === informer;
    const informer: SecretInformer = this.options.factory({
      upsert: (s) => live() && listener.upsert(s),
      deleted: (s) => live() && listener.deleted(s),
      listed: (s, rv) => {
        if (!live()) return;
        const why = this.nextListReason;
        // A list nobody asked for is ListWatch recovering from 410 Expired.
        this.nextListReason = 'expired';
        listener.listed(s, rv, why);
      },
      activity: () => live() && listener.activity(),
      ignored: (reason) => live() && listener.ignored(reason),
      watchOpened: () => {
        if (!live()) return;
        this.attempt = 0;
        this.nextListReason = 'expired';
      },
      streamOpened: () => {
        if (live()) this.streamOpenedAt ??= this.options.clock.now();
      },
      failed: (err) => live() && this.restartAfter(informer, err),
    });
    this.current = informer;
    this.launch(informer);
  }

  private launch(informer: SecretInformer): void {
    informer.start().catch((err: unknown) => {
      if (!this.stopped && this.current === informer) this.restartAfter(informer, err);
    });
  }

  private restartAfter(informer: SecretInformer, err: unknown): void {
    const { clock, policy } = this.options;
    const now = clock.now();
    // A stream that stayed open longer than the longest backoff was a healthy watch: start over.
    if (this.streamOpenedAt !== undefined && now - this.streamOpenedAt >= policy.maxDelayMs) this.attempt = 0;
    this.streamOpenedAt = undefined;
    this.attempt++;
    const delay = Math.max(backoffDelay(policy, this.attempt), retryAfterOf(err, now) ?? 0);
    this.options.listener.restarting(err, this.attempt, delay);
    this.backoff?.abort();
    const backoff = new AbortController();
    this.backoff = backoff;
    clock.sleep(delay, backoff.signal).then(
      () => {
        if (this.stopped || this.current !== informer || backoff.signal.aborted) return;
        this.backoff = undefined;
        this.nextListReason = 'restart';
        this.launch(informer);
      },
      () => undefined,
    );
  }

  private async relistLoop(): Promise<void> {
    const { clock, relistIntervalMs } = this.options;
    if (!(relistIntervalMs > 0) || !Number.isFinite(relistIntervalMs)) return;
    while (!this.stopped) {
      const wait = new AbortController();
      this.relistWait = wait;
      try {
        await clock.sleep(relistIntervalMs, wait.signal);
      } catch {
        return;
      }
      this.relist('periodic');
    }
  }
}
