/** Passes that still change the store after this many rounds yield to the event loop before going on. */
const MAX_ROUNDS = 50;

/**
 * Drives the simulated components: a pass runs every component in order, and passes repeat
 * until the store's resourceVersion stops moving. A pass is scheduled after any committed change
 * (on the next macrotask, so API requests interleave), at the times components ask for, and
 * every tickMs as a resync.
 */
export class ReconcileLoop {
  private scheduled: NodeJS.Immediate | undefined;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private resync: NodeJS.Timeout | undefined;
  private running = false;
  private dirty = false;
  private stopped = false;
  private readonly passListeners = new Set<() => void>();

  constructor(
    private readonly steps: Array<() => void>,
    private readonly revision: () => string,
    private readonly onError: (e: unknown) => void,
    tickMs: number,
  ) {
    if (tickMs > 0) {
      this.resync = setInterval(() => this.kick(), tickMs);
      this.resync.unref?.();
    }
  }

  /** Schedules a pass on the next macrotask (coalesced). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      this.runUntilStable();
    });
  }

  /** Asks for a pass at wall-clock `ms` (timers are coalesced per millisecond). */
  wakeAt(ms: number): void {
    if (this.stopped) return;
    const at = Math.ceil(ms);
    if (this.timers.has(at)) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(at);
        this.kick();
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref?.();
    this.timers.set(at, timer);
  }

  /** Runs passes now until nothing changes; returns false when it gave up after MAX_ROUNDS. */
  runUntilStable(): boolean {
    if (this.stopped || this.running) return true;
    this.running = true;
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        this.dirty = false;
        const before = this.revision();
        for (const step of this.steps) {
          if (this.stopped) return true;
          try {
            step();
          } catch (e) {
            this.onError(e);
          }
        }
        if (this.revision() === before && !this.dirty) return true;
      }
      return false;
    } finally {
      this.running = false;
      for (const l of [...this.passListeners]) l();
      if (!this.stopped && this.dirty) this.kick();
    }
  }

  /** Called after every completed run. */
  onPass(listener: () => void): () => void {
    this.passListeners.add(listener);
    return () => this.passListeners.delete(listener);
  }

  stop(): void {
    this.stopped = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    if (this.resync) clearInterval(this.resync);
  }
}
