import { type Clock, systemClock } from './clock.js';

// A point in time a whole operation must finish by. Every wait inside the operation goes through
// it, so no sleep (backoff, Retry-After, poll interval) can carry the operation past its end.

export class Deadline {
  private constructor(
    readonly atMs: number,
    readonly clock: Clock,
  ) {}

  /** A deadline `ms` from now; NaN or a negative length is already expired. */
  static after(ms: number, clock: Clock = systemClock): Deadline {
    return new Deadline(clock.now() + Math.max(0, ms || 0), clock);
  }

  /** No deadline: what a part of a run that keeps its own deadlines (the rollout's wait) runs under. */
  static never(clock: Clock = systemClock): Deadline {
    return new Deadline(Number.POSITIVE_INFINITY, clock);
  }

  static at(atMs: number, clock: Clock = systemClock): Deadline {
    return new Deadline(atMs, clock);
  }

  remainingMs(): number {
    return Math.max(0, this.atMs - this.clock.now());
  }

  expired(): boolean {
    return this.remainingMs() <= 0;
  }

  /** Sleeps `ms`, or only what is left of the deadline when that is shorter. Rejects when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.clock.sleep(Math.min(Math.max(0, ms || 0), this.remainingMs()), signal);
  }
}
