import { getEventListeners } from 'node:events';
import type { Clock } from '../../src/time/index.js';
import type { SecretInformer, SecretInformerFactory, SecretInformerHooks } from '../../src/reload/secret-informer.js';

// A clock whose sleeps end only when a test says so, and informers a test drives by hand.

export interface PendingSleep {
  ms: number;
  signal: AbortSignal | undefined;
  resolve(): void;
  aborted: boolean;
}

export class FakeClock implements Clock {
  t = 0;
  readonly sleeps: PendingSleep[] = [];
  /** Every signal a sleep was given, to check that none collects listeners over time. */
  readonly signals: Array<AbortSignal | undefined> = [];

  /** The most abort listeners any signal given to sleep() holds now. */
  maxAbortListeners(): number {
    return Math.max(0, ...this.signals.map((s) => (s ? getEventListeners(s, 'abort').length : 0)));
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry: PendingSleep = { ms, signal, resolve: () => resolve(), aborted: false };
      this.sleeps.push(entry);
      this.signals.push(signal);
      signal?.addEventListener(
        'abort',
        () => {
          entry.aborted = true;
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Pending (not aborted) sleeps of exactly `ms`. */
  pending(ms?: number): PendingSleep[] {
    return this.sleeps.filter((s) => !s.aborted && (ms === undefined || s.ms === ms));
  }

  /** Ends the oldest pending sleep of `ms` and lets promise callbacks run. */
  async wake(ms: number): Promise<void> {
    const sleep = this.pending(ms)[0];
    if (!sleep)
      throw new Error(
        `no pending sleep of ${ms} ms (pending: ${
          this.pending()
            .map((s) => s.ms)
            .join(', ') || 'none'
        })`,
      );
    this.sleeps.splice(this.sleeps.indexOf(sleep), 1);
    sleep.resolve();
    await settle();
  }
}

/** Lets queued promise callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

export interface FakeInformer extends SecretInformer {
  hooks: SecretInformerHooks;
  starts: number;
  stopped: boolean;
}

export function fakeInformers(): { factory: SecretInformerFactory; made: FakeInformer[] } {
  const made: FakeInformer[] = [];
  const factory: SecretInformerFactory = (hooks) => {
    const informer: FakeInformer = {
      hooks,
      starts: 0,
      stopped: false,
      start: async () => {
        informer.starts++;
      },
      stop: () => {
        informer.stopped = true;
      },
    };
    made.push(informer);
    return informer;
  };
  return { factory, made };
}
