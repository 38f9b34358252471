import { backoffDelay, type Clock, type RetryPolicy } from '../time/index.js';
import type { DecodedIdentity } from '../identity/index.js';

// Hands loaded identities on, one at a time and in order: write the file, then signal or restart.
// A newer identity replaces one still waiting; a failed hand-over is retried with backoff until
// it succeeds or a newer identity arrives, so a runner never stays on a stale file by accident.

export type ApplyStep = (identity: DecodedIdentity, reason: 'initial' | 'rotated') => Promise<void>;

interface ApplyQueueOptions {
  steps: ApplyStep[];
  policy: RetryPolicy;
  clock: Clock;
  onApplied(identity: DecodedIdentity, reason: 'initial' | 'rotated'): void;
  onError(err: unknown, attempt: number, retryInMs: number): void;
}

export class ApplyQueue {
  private wanted: DecodedIdentity | undefined;
  private applied: DecodedIdentity | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** One controller per wait: a long-lived signal would collect an abort listener per retry. */
  private retryWait: AbortController | undefined;

  constructor(private readonly options: ApplyQueueOptions) {}

  push(identity: DecodedIdentity): void {
    this.wanted = identity;
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once every pushed identity is handed on (or the queue was stopped). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    this.retryWait?.abort();
  }

  private async drain(): Promise<void> {
    let attempt = 0;
    while (this.wanted && this.wanted !== this.applied && !this.stopped) {
      const identity = this.wanted;
      const reason = this.applied ? 'rotated' : 'initial';
      try {
        for (const step of this.options.steps) await step(identity, reason);
        this.applied = identity;
        attempt = 0;
        this.options.onApplied(identity, reason);
      } catch (err) {
        attempt++;
        const delay = backoffDelay(this.options.policy, attempt);
        this.options.onError(err, attempt, delay);
        const wait = new AbortController();
        this.retryWait = wait;
        try {
          await this.options.clock.sleep(delay, wait.signal);
        } catch {
          return;
        }
      }
    }
  }
}
