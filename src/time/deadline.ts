import { type Clock, systemClock } from './clock.js';

// A point in time a whole operation must finish by. Every wait inside the operation goes through
// it, so no sleep (backoff, Retry-After, poll interval) can carry the operation past its end.

export class Deadline {
  private constructor(
    readonly atMs: number,
    readonly clock: Clock,
    /** The length it was given (Deadline.after), for messages that say it ("within 300 s"). */
    readonly lengthMs?: number,
  ) {}

  /** A deadline `ms` from now; NaN or a negative length is already expired. */
  static after(ms: number, clock: Clock = systemClock): Deadline {
    const length = Math.max(0, ms || 0);
    return new Deadline(clock.now() + length, clock, length);
  }

  /** No deadline: what a part of a run that keeps its own deadlines (the rollout's wait) runs under. */
  static never(clock: Clock = systemClock): Deadline {
    return new Deadline(Number.POSITIVE_INFINITY, clock);
  }

  static at(atMs: number, clock: Clock = systemClock): Deadline {
    return new Deadline(atMs, clock);
  }

  /** Its length as the operator gave it, for messages: "300 s", "800 ms"; "its deadline" when it was given as a point in time. */
  describeLength(): string {
    if (this.lengthMs === undefined || !Number.isFinite(this.lengthMs)) return 'its deadline';
    return this.lengthMs < 1000 ? `${this.lengthMs} ms` : `${Math.round(this.lengthMs / 1000)} s`;
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
