import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { memoryReleaser, RELEASE_DELAY_MS } from '../../src/watch/steady-memory.js';

// watch collects its garbage after work that made some (docs/architecture.md, "Start-up and memory"):
// once per burst, never keeping the process alive, never after it stopped.

describe('memoryReleaser', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs one collection RELEASE_DELAY_MS after the first request of a burst', () => {
    const release = vi.fn();
    const memory = memoryReleaser(release);
    for (let i = 0; i < 20; i++) {
      memory.request();
      vi.advanceTimersByTime(RELEASE_DELAY_MS / 40);
    }
    expect(release).not.toHaveBeenCalled();
    vi.advanceTimersByTime(RELEASE_DELAY_MS);
    expect(release).toHaveBeenCalledTimes(1);
    memory.request();
    vi.advanceTimersByTime(RELEASE_DELAY_MS);
    expect(release).toHaveBeenCalledTimes(2);
  });

  it('a steady stream of requests gets one collection per delay, not none', () => {
    const release = vi.fn();
    const memory = memoryReleaser(release, 1000);
    for (let t = 0; t < 10_000; t += 50) {
      memory.request();
      vi.advanceTimersByTime(50);
    }
    expect(release.mock.calls.length).toBeGreaterThanOrEqual(9);
    expect(release.mock.calls.length).toBeLessThanOrEqual(10);
  });

  it('cancel drops the pending one; its timer never holds the process', () => {
    const release = vi.fn();
    const memory = memoryReleaser(release);
    const spy = vi.spyOn(globalThis, 'setTimeout');
    memory.request();
    const timer = spy.mock.results[0]!.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    memory.cancel();
    vi.advanceTimersByTime(RELEASE_DELAY_MS * 2);
    expect(release).not.toHaveBeenCalled();
  });
});
