import type { V1DaemonSet, V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { onlyCapacityShortage, targetNode } from '../../src/rollout/capacity-fallback.js';
import { checkRollout, type ClusterView, identityUse, podRequests, scaledIntOrPercent } from '../../src/rollout/eligibility.js';
import { parseQuantity } from '../../src/rollout/quantity.js';
import { strategyOf } from '../../src/rollout/strategy-record.js';
import { restorePatch, surgePatch } from '../../src/rollout/surge-strategy.js';
import { parseWorkloadRef } from '../../src/rollout/workload-ref.js';

const container = (extra: Record<string, unknown> = {}) => ({
  name: 'runner',
  image: 'par:1',
  readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
  resources: { requests: { cpu: '500m', memory: '256Mi' } },
  envFrom: [{ secretRef: { name: 'private-action-runner-identity' } }],
  ...extra,
});

function daemonSet(
  podSpec: Record<string, unknown> = {},
  strategy: Record<string, unknown> = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
): V1DaemonSet {
  return {
    metadata: { name: 'par', namespace: 'datadog', uid: 'u1', generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'par' } },
      updateStrategy: strategy,
      template: { metadata: { labels: { app: 'par' } }, spec: { containers: [container()], ...podSpec } },
    },
    status: { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberMisscheduled: 0, numberReady: 3, observedGeneration: 1 },
  } as V1DaemonSet;
}

const node = (
  name: string,
  cpu = '2',
  memory = '4Gi',
  conditions: { type: string; status: string }[] = [{ type: 'Ready', status: 'True' }],
): V1Node => ({ metadata: { name }, spec: {}, status: { allocatable: { cpu, memory }, conditions } }) as V1Node;
const pod = (name: string, nodeName: string, cpu = '500m', memory = '256Mi'): V1Pod =>
  ({
    metadata: { name, labels: { app: 'par' } },
    spec: { nodeName, containers: [{ name: 'c', resources: { requests: { cpu, memory } } }] },
    status: { phase: 'Running' },
  }) as V1Pod;

function view(workload: V1DaemonSet, nodes: V1Node[], pods: V1Pod[], extra: V1Pod[] = []): ClusterView {
  return {
    kind: 'daemonset',
    workload,
    pods,
    podsOnNodes: [...pods, ...extra],
    nodes,
    pdbNames: [],
    identitySecretNames: ['private-action-runner-identity'],
  };
}

const threeNodes = () => [node('n1'), node('n2'), node('n3')];
const threePods = () => [pod('p1', 'n1'), pod('p2', 'n2'), pod('p3', 'n3')];
const codes = (v: ClusterView) =>
  checkRollout(v)
    .findings.filter((f) => f.severity === 'blocker')
    .map((f) => f.code);

describe('rollout --check classification', () => {
  it('a well-formed DaemonSet with room everywhere can surge, budget = maxUnavailable', () => {
    const check = checkRollout(view(daemonSet(), threeNodes(), threePods()));
    expect(check.verdict).toBe('can surge');
    expect(check.budget).toBe(1);
    expect(check.nodes.map((n) => n.verdict)).toEqual(['can surge', 'can surge', 'can surge']);
    expect(check.identity).toEqual({ ways: ['envFrom of container runner'], restartNeeded: true });
  });

  it('a full node needs the fallback and says what is short', () => {
    const hog = pod('hog', 'n2', '1500m', '1Gi');
    const check = checkRollout(view(daemonSet(), threeNodes(), threePods(), [hog]));
    expect(check.verdict).toBe('needs fallback');
    expect(check.nodes.find((n) => n.node === 'n2')).toMatchObject({ verdict: 'needs fallback', reasons: ['cpu: 0m free, 500m needed'] });
  });

  it('a not-Ready or pressured node is blocked', () => {
    const nodes = [
      node('n1'),
      node('n2', '2', '4Gi', [
        { type: 'Ready', status: 'True' },
        { type: 'MemoryPressure', status: 'True' },
      ]),
      node('n3', '2', '4Gi', [{ type: 'Ready', status: 'False' }]),
    ];
    const check = checkRollout(view(daemonSet(), nodes, threePods()));
    expect(check.nodes.map((n) => [n.node, n.verdict, n.reasons.join()])).toEqual([
      ['n1', 'can surge', 'room for a second Pod'],
      ['n2', 'blocked', 'MemoryPressure'],
      ['n3', 'blocked', 'node not Ready'],
    ]);
  });

  it.each([
    ['OnDelete strategy', daemonSet({}, { type: 'OnDelete' }), 'STRATEGY_ONDELETE'],
    [
      'hostPort on Pod networking',
      daemonSet({ containers: [container({ ports: [{ containerPort: 8080, hostPort: 8080 }] })] }),
      'HOST_PORT',
    ],
    [
      'hostNetwork with declared ports',
      daemonSet({ hostNetwork: true, containers: [container({ ports: [{ containerPort: 8080 }] })] }),
      'HOST_NETWORK_PORTS',
    ],
    [
      'required anti-affinity on hostname matching itself',
      daemonSet({
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'par' } } },
            ],
          },
        },
      }),
      'SELF_ANTI_AFFINITY',
    ],
    ['no readinessProbe', daemonSet({ containers: [container({ readinessProbe: undefined })] }), 'NO_READINESS_PROBE'],
  ])('%s blocks the surge', (_name, ds, code) => {
    const v = view(ds, threeNodes(), threePods());
    expect(codes(v)).toEqual([code]);
    expect(checkRollout(v).verdict).toBe('blocked');
  });

  it('hostNetwork without ports is fine; anti-affinity on other labels is fine', () => {
    expect(codes(view(daemonSet({ hostNetwork: true }), threeNodes(), threePods()))).toEqual([]);
    const other = daemonSet({
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'other' } } },
          ],
        },
      },
    });
    expect(codes(view(other, threeNodes(), threePods()))).toEqual([]);
  });

  it('PDBs are reported', () => {
    const v = { ...view(daemonSet(), threeNodes(), threePods()), pdbNames: ['par-pdb'] };
    expect(checkRollout(v).findings.some((f) => f.code === 'PDB' && f.message.includes('par-pdb'))).toBe(true);
  });

  it('how the identity is consumed: env, envFrom, subPath need a restart; a whole volume refreshes', () => {
    const names = ['id'];
    expect(
      identityUse({ containers: [{ name: 'c', env: [{ name: 'URN', valueFrom: { secretKeyRef: { name: 'id', key: 'urn' } } }] }] }, names),
    ).toEqual({ ways: ['env URN of container c'], restartNeeded: true });
    const volumes = [{ name: 'v', secret: { secretName: 'id' } }];
    expect(
      identityUse({ volumes, containers: [{ name: 'c', volumeMounts: [{ name: 'v', mountPath: '/id', subPath: 'urn' }] }] }, names)
        .restartNeeded,
    ).toBe(true);
    const whole = identityUse({ volumes, containers: [{ name: 'c', volumeMounts: [{ name: 'v', mountPath: '/id' }] }] }, names);
    expect(whole.restartNeeded).toBe(false);
    expect(whole.ways[0]).toContain('refreshed by the kubelet');
  });
});

describe("a Deployment's room: only the nodes its Pods may be scheduled to", () => {
  function deployment(podSpec: Record<string, unknown> = {}) {
    return {
      metadata: { name: 'par', namespace: 'datadog', generation: 1 },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'par' } },
        template: { metadata: { labels: { app: 'par' } }, spec: { containers: [container()], ...podSpec } },
      },
      status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
    } as never;
  }
  const labelled = (name: string, labels: Record<string, string>, cpu = '2', taints: object[] = []) =>
    ({ ...node(name, cpu), metadata: { name, labels }, spec: { taints } }) as V1Node;
  const deployView = (workload: never, nodes: V1Node[], extra: V1Pod[] = []): ClusterView => ({
    ...view(workload, nodes, [pod('p1', 'full')], extra),
    kind: 'deployment',
  });
  // "full" holds the replica and has no room left; "roomy" has room but another pool's label.
  const full = () => labelled('full', { pool: 'a' }, '500m');
  const roomy = (taints: object[] = []) => labelled('roomy', { pool: 'b' }, '2', taints);

  it('room on a node the nodeSelector excludes is no room: NO_ROOM, blocked', () => {
    const check = checkRollout(deployView(deployment({ nodeSelector: { pool: 'a' } }), [full(), roomy()]));
    expect(check.nodes.map((n) => n.node)).toEqual(['full']);
    expect(check.verdict).toBe('blocked');
    expect(codes(deployView(deployment({ nodeSelector: { pool: 'a' } }), [full(), roomy()]))).toEqual(['NO_ROOM']);
  });

  it('required node affinity (In / NotIn) and untolerated taints exclude nodes too; a toleration lets one in', () => {
    const affinity = (operator: string, values: string[]) => ({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator, values }] }],
          },
        },
      },
    });
    expect(checkRollout(deployView(deployment(affinity('In', ['a'])), [full(), roomy()])).verdict).toBe('blocked');
    expect(checkRollout(deployView(deployment(affinity('NotIn', ['a'])), [full(), roomy()])).verdict).toBe('can surge');
    const tainted = [full(), roomy([{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }])];
    expect(checkRollout(deployView(deployment(), tainted)).verdict).toBe('blocked');
    expect(
      checkRollout(
        deployView(deployment({ tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule' }] }), tainted),
      ).verdict,
    ).toBe('can surge');
  });

  it('no node the Pods may go to at all: NO_ROOM says so', () => {
    const check = checkRollout(deployView(deployment({ nodeSelector: { pool: 'none' } }), [full(), roomy()]));
    expect(check.findings.find((f) => f.code === 'NO_ROOM')?.message).toContain('no node the Pods may be scheduled to');
  });
});

describe('strategy arithmetic', () => {
  it('int-or-percent scaling rounds as the controllers do', () => {
    expect(scaledIntOrPercent('25%', 3, 0, true)).toBe(1);
    expect(scaledIntOrPercent('25%', 3, 0, false)).toBe(0);
    expect(scaledIntOrPercent(undefined, 10, 1, true)).toBe(1);
    expect(scaledIntOrPercent(2, 10, 1, true)).toBe(2);
  });

  it('a DaemonSet surges by its budget with maxUnavailable 0, and restores exactly', () => {
    const ds = daemonSet({}, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2, maxSurge: 0 } });
    const original = strategyOf('daemonset', ds);
    expect(surgePatch('daemonset', original, 2)).toEqual({
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: 0 } } },
    });
    expect(restorePatch('daemonset', original)).toEqual({
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 2 } } },
    });
  });

  it('a Deployment keeps its surge (at least 1) with maxUnavailable 0', () => {
    const original = { type: 'RollingUpdate', maxSurge: '25%', maxUnavailable: '25%' };
    expect(surgePatch('deployment', original, 0)).toEqual({
      spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } } },
    });
    expect(surgePatch('deployment', { ...original, maxSurge: 0, maxUnavailable: 1 }, 0)).toMatchObject({
      spec: { strategy: { rollingUpdate: { maxSurge: 1 } } },
    });
  });

  it('quantities and Pod requests', () => {
    expect(parseQuantity('500m')).toBe(0.5);
    expect(parseQuantity('1Gi')).toBe(2 ** 30);
    expect(parseQuantity('1e3')).toBe(1000);
    expect(parseQuantity('bogus')).toBeUndefined();
    expect(
      podRequests({
        containers: [
          { name: 'a', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
          { name: 'b', resources: { requests: { cpu: '200m' } } },
        ],
        initContainers: [{ name: 'i', resources: { requests: { cpu: '1' } } }],
      }),
    ).toEqual({ milliCpu: 1000, bytes: 64 * 2 ** 20 });
  });
});

describe('capacity fallback trigger', () => {
  it.each([
    [
      "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
      true,
    ],
    [
      "0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
      true,
    ],
    ['0/3 nodes are available: 1 Insufficient memory.', true],
    [
      "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3",
      false,
    ],
    ["0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't have free ports for the requested pod ports. preemption: x", false],
    ["0/3 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: x", false],
    ['', false],
  ])('%s → %s', (message, expected) => {
    expect(onlyCapacityShortage(message)).toBe(expected);
  });

  it('the target node comes from the injected matchFields affinity', () => {
    const p = {
      spec: {
        containers: [],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }],
            },
          },
        },
      },
    } as unknown as V1Pod;
    expect(targetNode(p)).toBe('n2');
  });

  it('workload references', () => {
    expect(parseWorkloadRef('ds/agent', 'datadog')).toEqual({ kind: 'daemonset', name: 'agent', namespace: 'datadog' });
    expect(parseWorkloadRef('deployment/par', 'x')).toEqual({ kind: 'deployment', name: 'par', namespace: 'x' });
    expect(() => parseWorkloadRef('statefulset/x', 'x')).toThrow(
      'the workload must be deployment/<name> or daemonset/<name>, got a 13-character value',
    );
  });
});
