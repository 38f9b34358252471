import type { V1DaemonSet, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { RolloutApi } from '../../src/rollout/rollout-api.js';
import { runRollout } from '../../src/rollout/run-rollout.js';
import { progressPrinter } from '../../src/rollout/rollout-workload.js';
import { Deadline } from '../../src/time/index.js';

// A rollout wait is never silent for more than 10 s (issue 23): driven by the injectable clock, so the
// test neither sleeps nor depends on the machine's speed. The clock advances 1 s (the default poll) at
// each poll while the Pods never turn over, until the rollout's own timeout (60 s of it) ends the wait.

const ds = {
  metadata: { name: 'par', namespace: 'datadog', uid: 'u1', generation: 1 },
  spec: {
    selector: { matchLabels: { app: 'par' } },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
    template: {
      metadata: { labels: { app: 'par' } },
      spec: { containers: [{ name: 'c', image: 'i', readinessProbe: { exec: { command: ['true'] } } }] },
    },
  },
  // The controller never takes up the new template: updatedNumberScheduled stays 0.
  status: { desiredNumberScheduled: 2, numberAvailable: 2, updatedNumberScheduled: 0, observedGeneration: 1 },
} as unknown as V1DaemonSet;
const pod = (name: string, node: string) => ({
  metadata: { name, labels: { app: 'par', 'controller-revision-hash': 'old' } },
  spec: { nodeName: node, containers: [] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});
const pods = [pod('p1', 'n1'), pod('p2', 'n2')] as unknown as V1Pod[];

const clock = (() => {
  let t = 0;
  return { tick: () => (t += 1000), now: () => new Date(Date.parse('2026-12-04T00:00:00Z') + t), elapsed: () => t, reset: () => (t = 0) };
})();

const api: RolloutApi = {
  readWorkload: async () => {
    clock.tick();
    return ds;
  },
  podsOf: async () => pods,
  nodes: async () => [],
  podsOnNode: async () => [],
  pdbNames: async () => [],
  patchWorkload: async () => ds,
  annotatePod: async () => {},
  deletePod: async () => {},
  recordEvent: async () => ({ recorded: true, name: 'e', namespace: 'datadog' }),
};

describe('rollout heartbeat', () => {
  for (const isTTY of [false, true]) {
    it(`a wait that shows no change still prints elapsed time and Pods ready/total at least every 10 s (stderr ${isTTY ? 'a terminal' : 'not a terminal'})`, async () => {
      clock.reset();
      const lines: { at: number; text: string }[] = [];
      const report = {
        step: () => {},
        info: (text: string) => lines.push({ at: clock.elapsed(), text }),
        warn: () => {},
        detail: () => {},
      };
      const err = await runRollout(api, {
        ref: { kind: 'daemonset', name: 'par', namespace: 'datadog' },
        checkOnly: false,
        surge: false,
        fallback: false,
        identitySecretNames: [],
        // The rollout's clock is the test's: a poll takes 1 s of it (readWorkload), a wait none.
        deadline: Deadline.after(60_000, { now: () => clock.now().getTime(), sleep: () => Promise.resolve() }),
        pollMs: 1,
        dryRun: false,
        onProgress: progressPrinter({ isTTY }, report),
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ROLLOUT_TIMEOUT' });
      const heartbeats = lines.filter((l) => l.text.startsWith('still waiting after'));
      expect(heartbeats.length).toBeGreaterThanOrEqual(4);
      expect(heartbeats[0]?.text).toMatch(/^still waiting after \d+ s: 2\/2 Pods ready, 0\/2 nodes on the new template$/);
      // No silence longer than 10 s between any two lines of the wait.
      const times = lines.map((l) => l.at);
      const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
      expect(Math.max(...gaps)).toBeLessThanOrEqual(10_000);
    });
  }
});
