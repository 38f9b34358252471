import { Deadline } from '../time/index.js';

// One deadline over a lookup made of several requests (docker ping + info, kubelet candidates):
// each request gets at most its own cap and never more than what is left of the whole.

export class LookupDeadline {
  private readonly deadline: Deadline;

  constructor(readonly totalMs: number) {
    this.deadline = Deadline.after(totalMs);
  }

  /** Milliseconds the next request may take; throws once the whole lookup is out of time. */
  budget(perRequestMs = Number.POSITIVE_INFINITY): number {
    const left = this.deadline.remainingMs();
    if (left <= 0) throw new Error(`no answer within ${this.totalMs} ms`);
    return Math.min(perRequestMs, left);
  }
}
