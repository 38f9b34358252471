import type { V1DaemonSet, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubernetesError } from '../../src/errors.js';
import type { RecordEventInput } from '../../src/kube/index.js';
import { checkRollout } from '../../src/rollout/eligibility.js';
import type { RolloutApi } from '../../src/rollout/rollout-api.js';
import { runRollout } from '../../src/rollout/run-rollout.js';
import { Deadline } from '../../src/time/index.js';

// What `rollout` does with a namespaced Role only: node capacity and PDBs are optional reads,
// skipped with a finding; the capacity fallback refuses to run blind.

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
  status: { desiredNumberScheduled: 1, numberAvailable: 1, updatedNumberScheduled: 1, observedGeneration: 1 },
} as unknown as V1DaemonSet;
const pods = [
  {
    metadata: { name: 'p1', labels: { app: 'par', 'controller-revision-hash': 'a' } },
    spec: { nodeName: 'n1', containers: [] },
    status: { phase: 'Running' },
  },
] as unknown as V1Pod[];

function forbidden(what: string): never {
  throw new KubernetesError('KUBE_FORBIDDEN', `${what}: nodes is forbidden`, 'hint');
}

function fakeApi(calls: string[]): RolloutApi {
  return {
    readWorkload: async () => ds,
    podsOf: async () => pods,
    nodes: async () => forbidden('listing nodes'),
    podsOnNode: async () => forbidden('listing Pods on node n1'),
    pdbNames: async () => undefined,
    patchWorkload: async (_ref, patch) => {
      calls.push(`patch ${JSON.stringify(patch)}`);
      return ds;
    },
    annotatePod: async () => {},
    deletePod: async () => {},
    recordEvent: async (input: RecordEventInput) => {
      calls.push(`event ${input.reason}`);
      return { recorded: true, name: 'e', namespace: 'datadog' };
    },
  };
}

const options = {
  ref: { kind: 'daemonset' as const, name: 'par', namespace: 'datadog' },
  checkOnly: false,
  surge: 'auto' as const,
  fallback: false,
  identitySecretNames: ['private-action-runner-identity'],
  // A fresh second at each run (read when the options are spread into it).
  get deadline() {
    return Deadline.after(1000);
  },
  pollMs: 1,
  dryRun: false,
};

describe('rollout with a namespaced Role only', () => {
  it('checkRollout reports capacity and PDBs as unchecked instead of failing', () => {
    const check = checkRollout({
      kind: 'daemonset',
      workload: ds,
      pods,
      podsOnNodes: [],
      nodes: [],
      pdbNames: undefined,
      identitySecretNames: [],
      capacityUnavailable: 'no list on nodes',
    });
    expect(check.capacityChecked).toBe(false);
    expect(check.nodes).toEqual([]);
    expect(check.findings.map((f) => [f.code, f.severity])).toEqual(
      expect.arrayContaining([
        ['CAPACITY_UNCHECKED', 'warning'],
        ['PDB_UNCHECKED', 'info'],
      ]),
    );
    expect(check.findings.find((f) => f.code === 'CAPACITY_UNCHECKED')?.message).toContain('par-identity-rollout-capacity');
  });

  it('--check goes ahead without node reads (unknown room is a warning, not a blocker) and writes nothing', async () => {
    const calls: string[] = [];
    const checked = await runRollout(fakeApi(calls), { ...options, checkOnly: true });
    expect(checked.check.capacityChecked).toBe(false);
    expect(checked.check.verdict).toBe('can surge');
    expect(calls).toEqual([]);
  });

  it('--fallback refuses before any patch or Event when nodes cannot be read', async () => {
    const calls: string[] = [];
    await expect(runRollout(fakeApi(calls), { ...options, fallback: true })).rejects.toMatchObject({
      code: 'FALLBACK_UNAVAILABLE',
      exitCode: 10,
    });
    expect(calls).toEqual([]);
  });
});
