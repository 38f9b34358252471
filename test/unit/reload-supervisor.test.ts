import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeApiStatus } from '../../src/kube/kube-errors.js';
import { InformerSupervisor } from '../../src/reload/informer-supervisor.js';
import type { ListReason } from '../../src/reload/watch-events.js';
import { FakeClock, fakeInformers, settle } from './reload-fakes.js';

// Restart backoff, its reset, the periodic re-list and stop(), with a clock the test advances.

const RELIST = 600_000;

function setup(random = () => 1) {
  const clock = new FakeClock();
  const { factory, made } = fakeInformers();
  const seen: string[] = [];
  const restarts: Array<[number, number]> = [];
  const lists: ListReason[] = [];
  const supervisor = new InformerSupervisor({
    factory,
    clock,
    policy: { initialDelayMs: 1000, maxDelayMs: 30_000, random },
    relistIntervalMs: RELIST,
    listener: {
      upsert: (s) => seen.push(`upsert:${s.metadata?.resourceVersion}`),
      deleted: (s) => seen.push(`deleted:${s.metadata?.resourceVersion}`),
      listed: (_s, _rv, reason) => lists.push(reason),
      activity: () => seen.push('activity'),
      ignored: (reason) => seen.push(`ignored:${reason}`),
      restarting: (_err, attempt, delay) => restarts.push([attempt, delay]),
    },
  });
  return { clock, made, seen, restarts, lists, supervisor };
}

const secret = (rv: string): V1Secret => ({ metadata: { name: 's', resourceVersion: rv } });

describe('InformerSupervisor', () => {
  it('restarts the same informer after 1 s, 2 s, 4 s … capped at 30 s', async () => {
    const { clock, made, restarts, supervisor } = setup();
    supervisor.start();
    await settle();
    expect(made).toHaveLength(1);
    const informer = made[0]!;
    expect(informer.starts).toBe(1);
    const expected = [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000];
    for (const [i, delay] of expected.entries()) {
      informer.hooks.failed(new Error('boom'));
      expect(restarts.at(-1)).toEqual([i + 1, delay]);
      expect(informer.starts).toBe(i + 1);
      await clock.wake(delay);
      expect(informer.starts).toBe(i + 2);
    }
    expect(made).toHaveLength(1);
    supervisor.stop();
  });

  it('jitters each wait between half and all of the step', async () => {
    const low = setup(() => 0);
    low.supervisor.start();
    low.made[0]!.hooks.failed(new Error('x'));
    low.made[0]!.hooks.failed(new Error('x'));
    expect(low.restarts).toEqual([
      [1, 500],
      [2, 1000],
    ]);
    low.supervisor.stop();
  });

  it('starts the backoff over once a watch stream opens', async () => {
    const { clock, made, restarts, supervisor } = setup();
    supervisor.start();
    const informer = made[0]!;
    informer.hooks.failed(new Error('a'));
    await clock.wake(1000);
    informer.hooks.failed(new Error('b'));
    await clock.wake(2000);
    informer.hooks.watchOpened();
    informer.hooks.failed(new Error('c'));
    expect(restarts).toEqual([
      [1, 1000],
      [2, 2000],
      [1, 1000],
    ]);
    expect(supervisor.failures).toBe(1);
    supervisor.stop();
  });

  it('waits at least what a 429 Retry-After asks (header or Status details), at most 60 s', async () => {
    const { clock, made, restarts, supervisor } = setup();
    supervisor.start();
    const informer = made[0]!;
    informer.hooks.failed(new KubeApiStatus(429, { message: 'slow down' }, '20'));
    await clock.wake(20_000);
    informer.hooks.failed(new KubeApiStatus(429, { message: 'slow down', details: { retryAfterSeconds: 7 } } as never));
    await clock.wake(7000);
    informer.hooks.failed(new KubeApiStatus(503, { message: 'later' }, '3600'));
    await clock.wake(60_000);
    // A Retry-After shorter than the backoff does not shorten it (the 4th step is 8 s).
    informer.hooks.failed(new KubeApiStatus(429, { message: 'soon' }, '1'));
    expect(restarts).toEqual([
      [1, 20_000],
      [2, 7000],
      [3, 60_000],
      [4, 8000],
    ]);
    supervisor.stop();
  });

  it('starts the backoff over when a quiet stream stayed open longer than the longest backoff', async () => {
    const { clock, made, restarts, supervisor } = setup();
    supervisor.start();
    const informer = made[0]!;
    for (const delay of [1000, 2000, 4000]) {
      informer.hooks.failed(new Error('down'));
      await clock.wake(delay);
    }
    // Open for 10 s, no event: not yet healthy, the backoff goes on growing.
    informer.hooks.streamOpened?.();
    clock.t += 10_000;
    informer.hooks.failed(new Error('dropped'));
    await clock.wake(8000);
    // Open for an hour without an event (a quiet Secret; re-opened quietly after each of the
    // apiserver's timeouts), then a re-open fails at once: the next wait starts from 1 s.
    informer.hooks.streamOpened?.();
    for (let i = 0; i < 6; i++) {
      clock.t += 600_000;
      informer.hooks.streamOpened?.();
    }
    informer.hooks.failed(new Error('dropped'));
    expect(restarts.map(([, delay]) => delay)).toEqual([1000, 2000, 4000, 8000, 1000]);
    supervisor.stop();
  });

  it('names why each list happened: start, restart after an error, 410 Expired, periodic', async () => {
    const { clock, made, lists, supervisor } = setup();
    supervisor.start();
    made[0]!.hooks.listed(secret('1'), '1');
    made[0]!.hooks.watchOpened();
    made[0]!.hooks.listed(secret('2'), '2');
    made[0]!.hooks.failed(new Error('list failed'));
    await clock.wake(1000);
    made[0]!.hooks.listed(secret('3'), '3');
    await clock.wake(RELIST);
    expect(made).toHaveLength(2);
    made[1]!.hooks.listed(secret('4'), '4');
    expect(lists).toEqual(['start', 'expired', 'restart', 'periodic']);
    supervisor.stop();
  });

  it('re-lists on a fresh informer every interval and ignores the replaced one', async () => {
    const { clock, made, seen, supervisor } = setup();
    supervisor.start();
    await clock.wake(RELIST);
    expect(made).toHaveLength(2);
    expect(made[0]!.stopped).toBe(true);
    expect(made[1]!.starts).toBe(1);
    made[0]!.hooks.upsert(secret('old'));
    made[0]!.hooks.failed(new Error('aborted'));
    made[1]!.hooks.upsert(secret('new'));
    made[1]!.hooks.deleted(secret('gone'));
    made[1]!.hooks.activity();
    expect(seen).toEqual(['upsert:new', 'deleted:gone', 'activity']);
    expect(clock.pending(1000)).toEqual([]);
    await clock.wake(RELIST);
    expect(made).toHaveLength(3);
    supervisor.stop();
  });

  it('keeps re-listing for as long as it runs without collecting abort listeners', async () => {
    const { clock, made, supervisor } = setup();
    supervisor.start();
    for (let i = 0; i < 25; i++) {
      made.at(-1)!.hooks.failed(new Error('flaky'));
      await clock.wake(RELIST);
    }
    expect(made).toHaveLength(26);
    expect(clock.maxAbortListeners()).toBeLessThanOrEqual(1);
    supervisor.stop();
  });

  it('a periodic re-list cancels a pending restart', async () => {
    const { clock, made, supervisor } = setup();
    supervisor.start();
    made[0]!.hooks.failed(new Error('down'));
    expect(clock.pending(1000)).toHaveLength(1);
    await clock.wake(RELIST);
    expect(clock.pending(1000)).toEqual([]);
    expect(made[0]!.starts).toBe(1);
    expect(made[1]!.starts).toBe(1);
    supervisor.stop();
  });

  it('treats a rejected start() as a failure', async () => {
    const { made, restarts, supervisor, clock } = setup();
    supervisor.start();
    made[0]!.start = () => Promise.reject(new Error('no cluster'));
    made[0]!.hooks.failed(new Error('first'));
    await clock.wake(1000);
    await settle();
    expect(restarts).toEqual([
      [1, 1000],
      [2, 2000],
    ]);
    supervisor.stop();
  });

  it('stop() stops the informer, aborts every wait, and nothing restarts afterwards', async () => {
    const { clock, made, restarts, seen, supervisor } = setup();
    supervisor.start();
    made[0]!.hooks.failed(new Error('x'));
    supervisor.stop();
    expect(made[0]!.stopped).toBe(true);
    expect(clock.pending()).toEqual([]);
    made[0]!.hooks.failed(new Error('late'));
    made[0]!.hooks.upsert(secret('late'));
    supervisor.relist();
    await settle();
    expect(restarts).toHaveLength(1);
    expect(seen).toEqual([]);
    expect(made).toHaveLength(1);
  });
});
