import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeIdentity } from '../../src/identity/index.js';
import { type RunningCli, runCli, startCli } from '../e2e/run-cli.js';
import { type AgentWorld, agentWorld } from './agent-world.js';
import { watchCoverage } from './pod-watch.js';
import { CLUSTER_KIND, eventually, startTestCluster, stoppedByFailpoint, type TestCluster, workloadsRun } from './test-cluster.js';

// `par-identity rollout` of a Deployment and a DaemonSet across Nodes whose Pods become Ready after
// a delay (kwok on the real cluster, the simulation on the emulator), with the cluster's own
// controllers and scheduler doing the surge; the capacity fallback on a Node whose allocatable CPU
// leaves no room for a second Pod (the real scheduler: Insufficient cpu), and its delete refused by
// the apiserver when another writer replaced the old Pod under the same name.

const FINGERPRINT = 'par-identity.datadoghq.com/identity-fingerprint';
/** kwok's per-Pod delay before Ready (test/control-plane/kwok-stages.yaml). */
const KWOK_READY_DELAY = 'pod-ready.stage.kwok.x-k8s.io/delay';
let cluster: TestCluster;
let w: AgentWorld;
let kid: string;
// Nodes of this file alone (a label the workloads select), so other files' Nodes stay out of it.
const pool = `pool-${randomBytes(3).toString('hex')}`;
const nodes = ['a', 'b', 'c'].map((n) => `${pool}-${n}`);
const small = `${pool}-small`;

beforeAll(async () => {
  cluster = await startTestCluster();
  if (!workloadsRun.skip)
    await cluster.addNodes(nodes.map((name) => ({ name, cpu: '2', memory: '4Gi', labels: { 'par-test-pool': pool } })));
  w = await agentWorld(cluster, 'rollout');
  expect((await w.rotate(['--no-verify'])).code).toBe(0);
  const data = await w.secretData();
  kid = decodeIdentity({ privateKey: data.private_key!, urn: data.urn! }).key.kid;
});
afterAll(async () => {
  if (!workloadsRun.skip) await cluster?.removeNodes([...nodes, small]);
  await w?.close();
  await cluster?.close();
});

function podTemplate(app: string, selectPool = pool) {
  return {
    metadata: { labels: { app } },
    spec: {
      nodeSelector: { 'par-test-pool': selectPool },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'runner',
          image: 'registry.example/par:1',
          readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
          resources: { requests: { cpu: '600m', memory: '128Mi' } },
          envFrom: [{ secretRef: { name: 'private-action-runner-identity' } }],
        },
      ],
    },
  };
}

async function daemonSet(name: string, selectPool = pool) {
  await cluster.create({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: w.ns },
    spec: {
      selector: { matchLabels: { app: name } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      template: podTemplate(name, selectPool),
    },
  });
}

async function deployment(name: string, replicas: number) {
  await cluster.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: w.ns },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(name) },
  });
}

interface PodList {
  items: Array<{
    metadata: { name: string; uid: string; annotations?: Record<string, string>; deletionTimestamp?: string };
    spec: { nodeName?: string };
    status?: { conditions?: Array<{ type: string; status: string }> };
  }>;
}
const podsOf = async (app: string) =>
  JSON.parse(await cluster.kubectlOk(['get', 'pods', '-n', w.ns, '-l', `app=${app}`, '-o', 'json'])) as PodList;
const readyPods = async (app: string) =>
  (await podsOf(app)).items.filter(
    (p) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  );
const allReady = (app: string, count: number) =>
  eventually(
    async () => (await readyPods(app)).length === count && (await podsOf(app)).items.length === count,
    `${count} Ready Pods of ${app}`,
    60_000,
    250,
  );

const rollout = (...args: string[]) =>
  runCli(['rollout', ...args, '-n', w.ns, '--kubeconfig', cluster.adminKubeconfig, '--poll-interval', '200ms'], {
    env: w.env,
    timeoutMs: 120_000,
  });

/**
 * The rollout started with PAR_IDENTITY_FAILPOINT=<point>:stop, once it has stopped itself there: the
 * test changes the cluster at exactly that point, then resumes it with SIGCONT. killIfRunning in the
 * test's finally: a test that fails while the run is stopped leaves no stopped process behind.
 */
async function rolloutStoppedAt(point: string, ...args: string[]): Promise<RunningCli> {
  const cli = startCli(['rollout', ...args, '-n', w.ns, '--kubeconfig', cluster.adminKubeconfig, '--poll-interval', '200ms'], {
    env: { ...w.env, PAR_IDENTITY_FAILPOINT: `${point}:stop` },
  });
  cli.child.stdin.end();
  await Promise.race([
    stoppedByFailpoint(cli.child.pid!),
    cli.exit.then(({ code }) => {
      throw new Error(`the rollout exited ${code} before its failpoint ${point}: ${cli.stderr()}`);
    }),
  ]);
  return cli;
}
const killIfRunning = (cli: RunningCli | undefined) => {
  if (cli && cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
};

interface AuditEvent {
  reason: string;
  type: string;
  note?: string;
  eventTime: string;
}
/** The Events par-identity recorded on one workload (events.k8s.io/v1), oldest first. */
async function auditEvents(kind: string, name: string): Promise<AuditEvent[]> {
  const list = JSON.parse(await cluster.kubectlOk(['get', 'events.v1.events.k8s.io', '-n', w.ns, '-o', 'json'])) as {
    items: Array<AuditEvent & { reportingController?: string; regarding?: { kind: string; name: string } }>;
  };
  return list.items
    .filter((e) => e.reportingController === 'par-identity' && e.regarding?.kind === kind && e.regarding.name === name)
    .sort((a, b) => a.eventTime.localeCompare(b.eventTime));
}

/**
 * From now on, Pods of `app` created with the identity fingerprint (those of a restart) never become
 * Ready, as runners whose readiness probe never passes: a MutatingAdmissionPolicy gives them kwok's
 * own per-Pod delay annotation (test/control-plane/kwok-stages.yaml) of an hour. The Pods made before
 * the restart carry no fingerprint and stay as they are. An admission policy rather than a kwok stage:
 * it is scoped to this test's namespace and workload and removed after it, so the control plane stays
 * the same for every other test. Returns its removal.
 */
async function neverReadyOnceRestarted(app: string): Promise<() => Promise<void>> {
  const name = `never-ready-${w.ns}-${app}`;
  const remove = async () => {
    await cluster.kubectl(['delete', 'mutatingadmissionpolicybinding', name, '--ignore-not-found']);
    await cluster.kubectl(['delete', 'mutatingadmissionpolicy', name, '--ignore-not-found']);
  };
  await cluster.create(
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] },
        matchConditions: [
          { name: 'restarted', expression: `has(object.metadata.annotations) && '${FINGERPRINT}' in object.metadata.annotations` },
        ],
        failurePolicy: 'Fail',
        reinvocationPolicy: 'Never',
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: {
              expression: `Object{metadata: Object.metadata{annotations: {"${KWOK_READY_DELAY}": "1h"}}}`,
            },
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name },
      spec: {
        policyName: name,
        matchResources: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': w.ns } },
          objectSelector: { matchLabels: { app } },
        },
      },
    },
  );
  // A new policy takes effect once the apiserver has loaded it: until a server-side dry run of such a
  // Pod comes back with the delay, which stores nothing.
  const probe = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${app}-probe`, namespace: w.ns, labels: { app }, annotations: { [FINGERPRINT]: 'probe' } },
    spec: { containers: [{ name: 'probe', image: 'registry.example/probe:1' }] },
  });
  await eventually(async () => {
    const out = await cluster.kubectlOk(['create', '--dry-run=server', '-o', 'json', '-f', '-'], { stdin: probe });
    return (JSON.parse(out) as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.[KWOK_READY_DELAY] === '1h';
  }, `the never-Ready policy of ${app} in effect`);
  return remove;
}

describe.skipIf(workloadsRun.skip)(`rollout on the ${CLUSTER_KIND} cluster ${workloadsRun.label}`, () => {
  it('DaemonSet: --check reports every node can surge and writes nothing', async () => {
    await daemonSet('check');
    await allReady('check', 3);
    const generation = (await cluster.getJson('daemonset', 'check', w.ns))!.metadata.generation;
    const run = await rollout('daemonset/check', '--check', '--json');
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { check: { verdict: string; nodes: { node: string; verdict: string }[] } };
    expect(out.check.verdict, run.stdout).toBe('can surge');
    expect(out.check.nodes.map((n) => [n.node, n.verdict]).sort()).toEqual(nodes.map((n) => [n, 'can surge']));
    expect((await cluster.getJson('daemonset', 'check', w.ns))!.metadata.generation).toBe(generation);
  });

  it('DaemonSet: surge create-before-delete, no node ever without a Ready Pod, strategy restored, Events recorded', async () => {
    await daemonSet('par');
    await allReady('par', 3);
    const coverage = await watchCoverage(cluster.adminKubeconfig, w.ns, 'app=par', { nodes });
    const run = await rollout('daemonset/par', '--json');
    await coverage.stop();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ action: 'rolled-out', surged: true, strategyRestored: true });
    expect(coverage.gaps).toEqual([]);
    const ds = (await cluster.getJson('daemonset', 'par', w.ns))!;
    expect(ds.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    expect(ds.spec.template.metadata.annotations[FINGERPRINT]).toBe(kid);
    const pods = await readyPods('par');
    expect(pods).toHaveLength(3);
    expect(pods.every((p) => p.metadata.annotations?.[FINGERPRINT] === kid)).toBe(true);
    // The audit trail, as kubectl shows it.
    const events = await cluster.kubectlOk(['events', '-n', w.ns, '--for', 'daemonset/par']);
    expect(events).toMatch(/Normal\s+RolloutStarted\s+DaemonSet\/par/);
    expect(events).toMatch(/Normal\s+RolloutCompleted\s+DaemonSet\/par/);
    const describe = await cluster.kubectlOk(['describe', 'daemonset', 'par', '-n', w.ns]);
    expect(describe.slice(describe.indexOf('\nEvents:'))).toMatch(new RegExp(`RolloutStarted\\s+\\S+\\s+par-identity\\s+.*${kid}`));
  });

  it('Deployment: surge, never fewer Ready replicas than desired, strategy restored', async () => {
    await deployment('dep', 2);
    await allReady('dep', 2);
    const original = (await cluster.getJson('deployment', 'dep', w.ns))!.spec.strategy;
    const coverage = await watchCoverage(cluster.adminKubeconfig, w.ns, 'app=dep', { minimum: 2 });
    const run = await rollout('deployment/dep', '--json');
    await coverage.stop();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ action: 'rolled-out', surged: true, strategyRestored: true });
    expect(coverage.gaps).toEqual([]);
    expect((await cluster.getJson('deployment', 'dep', w.ns))!.spec.strategy).toEqual(original);
    const pods = await readyPods('dep');
    expect(pods.length).toBeGreaterThanOrEqual(2);
    expect(pods.every((p) => p.metadata.annotations?.[FINGERPRINT] === kid)).toBe(true);
  });

  it('DaemonSet: a never-Ready replacement stalls the rollout, the old Pods keep running, and the strategy is restored', async () => {
    // Nodes of its own: the pool's have no room left for another DaemonSet and its surge Pod.
    const stallPool = `${pool}-r`;
    const stallNodes = [`${stallPool}1`, `${stallPool}2`];
    await cluster.addNodes(stallNodes.map((name) => ({ name, cpu: '2', memory: '4Gi', labels: { 'par-test-pool': stallPool } })));
    let removePolicy: (() => Promise<void>) | undefined;
    let cli: RunningCli | undefined;
    try {
      await daemonSet('stall', stallPool);
      await allReady('stall', 2);
      const oldPods = (await readyPods('stall')).map((p) => p.metadata.name).sort();
      removePolicy = await neverReadyOnceRestarted('stall');
      // Stopped after its first poll, the run waits for the test to see the replacement bound to its
      // node and not Ready; the deadline runs on meanwhile, so however long that takes, the run goes on
      // to its timeout with the replacement there.
      cli = await rolloutStoppedAt('rollout-during-wait', 'daemonset/stall', '--timeout', '5s');
      const replacement = await eventually(
        async () => (await podsOf('stall')).items.find((p) => p.metadata.annotations?.[FINGERPRINT] === kid && p.spec.nodeName),
        'the replacement Pod bound to its node',
        60_000,
        250,
      );
      expect(replacement.metadata.annotations?.[KWOK_READY_DELAY]).toBe('1h');
      cli.child.kill('SIGCONT');
      const { code } = await cli.exit;
      expect(code, cli.stderr()).toBe(10);
      expect(cli.stderr()).toContain('error[ROLLOUT_TIMEOUT]');
      // The replacement never became Ready, so no old Pod was deleted: both still run, Ready.
      expect((await readyPods('stall')).map((p) => p.metadata.name).sort()).toEqual(oldPods);
      const events = await auditEvents('DaemonSet', 'stall');
      expect(events.map((e) => [e.reason, e.type])).toEqual([
        ['RolloutStarted', 'Normal'],
        ['RolloutFailed', 'Warning'],
      ]);
      expect(events[1]!.note).toContain('ROLLOUT_TIMEOUT');
      const ds = (await cluster.getJson('daemonset', 'stall', w.ns))!;
      expect(ds.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
      // The restart undone with it: the template is the original again.
      expect(ds.spec.template.metadata.annotations?.[FINGERPRINT]).toBeUndefined();
    } finally {
      killIfRunning(cli);
      await removePolicy?.();
      await cluster.removeNodes(stallNodes);
    }
  });

  describe('capacity fallback on a node with small allocatable CPU', () => {
    // One node of 1 CPU: a 600m runner Pod fits, a second (the surge) does not: Insufficient cpu.
    const smallPool = `${pool}-s`;
    beforeAll(async () => {
      if (!workloadsRun.skip) await cluster.addNodes([{ name: small, cpu: '1', memory: '4Gi', labels: { 'par-test-pool': smallPool } }]);
    });

    it('--check names the full node; without --fallback the rollout is refused before any change', async () => {
      await daemonSet('full', smallPool);
      await allReady('full', 1);
      const check = await rollout('daemonset/full', '--check', '--json');
      expect(check.code, check.stderr).toBe(0);
      const out = JSON.parse(check.stdout) as { check: { nodes: { node: string; verdict: string }[] } };
      expect(out.check.nodes).toEqual([expect.objectContaining({ node: small, verdict: 'needs fallback' })]);
      const generation = (await cluster.getJson('daemonset', 'full', w.ns))!.metadata.generation;
      const run = await rollout('daemonset/full');
      expect(run.code).toBe(10);
      expect(run.stderr).toContain('error[NEEDS_FALLBACK]');
      expect(run.stderr).toContain(small);
      expect((await cluster.getJson('daemonset', 'full', w.ns))!.metadata.generation).toBe(generation);
    });

    it('with --fallback the full node is done delete-before-create and ends on the new template', async () => {
      const run = await rollout('daemonset/full', '--fallback', '--json');
      expect(run.code, run.stderr).toBe(0);
      const out = JSON.parse(run.stdout) as { fallbackSteps: { node: string; deletedPod?: string }[] };
      expect(out.fallbackSteps.filter((s) => s.deletedPod).map((s) => s.node)).toEqual([small]);
      await allReady('full', 1);
      expect((await readyPods('full'))[0]!.metadata.annotations?.[FINGERPRINT]).toBe(kid);
      const events = await cluster.kubectlOk(['events', '-n', w.ns, '--for', 'daemonset/full']);
      expect(events).toMatch(/Warning\s+RolloutFallback\s+DaemonSet\/full/);
    });

    it('room taken after the check: the surge Pod stays Pending (Insufficient cpu from the scheduler) and --fallback makes room', async () => {
      // 1500m: the check finds room for a second 600m Pod; then, with the run stopped right before its
      // first patch, another Pod takes 500m, so the surge Pod cannot fit and the scheduler says why.
      const mid = `${pool}-mid`;
      const midPool = `${pool}-m`;
      if (!workloadsRun.skip) await cluster.addNodes([{ name: mid, cpu: '1500m', memory: '4Gi', labels: { 'par-test-pool': midPool } }]);
      try {
        await daemonSet('late', midPool);
        await allReady('late', 1);
        const cli = startCli(
          [
            'rollout',
            'daemonset/late',
            '--fallback',
            '--json',
            '-n',
            w.ns,
            '--kubeconfig',
            cluster.adminKubeconfig,
            '--poll-interval',
            '200ms',
          ],
          {
            env: { ...w.env, PAR_IDENTITY_FAILPOINT: 'rollout-before-patch:stop' },
          },
        );
        cli.child.stdin.end();
        await stoppedByFailpoint(cli.child.pid!);
        await cluster.create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'hog', namespace: w.ns },
          spec: {
            nodeName: mid,
            terminationGracePeriodSeconds: 0,
            containers: [{ name: 'hog', image: 'registry.example/hog:1', resources: { requests: { cpu: '500m' } } }],
          },
        });
        cli.child.kill('SIGCONT');
        const { code } = await cli.exit;
        expect(code, cli.stderr()).toBe(0);
        const out = JSON.parse(cli.stdout()) as {
          check: { nodes: { verdict: string }[] };
          fallbackSteps: { node: string; deletedPod?: string }[];
        };
        expect(out.check.nodes.map((n) => n.verdict)).toEqual(['can surge']);
        expect(out.fallbackSteps.filter((s) => s.deletedPod).map((s) => s.node)).toEqual([mid]);
        // The trigger was the scheduler's own word for it, recorded on the surge Pod.
        const scheduling = await cluster.kubectlOk([
          'get',
          'events',
          '-n',
          w.ns,
          '--field-selector',
          'reason=FailedScheduling',
          '-o',
          'json',
        ]);
        expect(JSON.stringify(JSON.parse(scheduling).items.map((e: { message?: string; note?: string }) => e.message ?? e.note))).toMatch(
          /Insufficient cpu/,
        );
        await allReady('late', 1);
        expect((await readyPods('late'))[0]!.metadata.annotations?.[FINGERPRINT]).toBe(kid);
      } finally {
        await cluster.kubectl(['delete', 'pod', 'hog', '-n', w.ns, '--wait=false']);
        await cluster.removeNodes([mid]);
      }
    });

    it('never deletes a Pod whose UID changed: the delete is refused (409 from the precondition), the same-named Pod stays', async () => {
      // A node of its own with no room for a second 600m Pod, so the surge Pod stays Pending and the
      // fallback is taken.
      const swap = `${pool}-swap`;
      const swapPool = `${pool}-w`;
      await cluster.addNodes([{ name: swap, cpu: '1', memory: '4Gi', labels: { 'par-test-pool': swapPool } }]);
      let cli: RunningCli | undefined;
      let oldName: string | undefined;
      try {
        await daemonSet('swap', swapPool);
        await allReady('swap', 1);
        const old = (await podsOf('swap')).items[0]!;
        oldName = old.metadata.name;
        cli = await rolloutStoppedAt('rollout-before-fallback-delete', 'daemonset/swap', '--fallback', '--json');
        // Stopped right before its delete of the old Pod (the UID it read in the precondition): another
        // writer deletes that Pod and makes a new one of the same name, on the same node.
        await cluster.kubectlOk(['delete', 'pod', oldName, '-n', w.ns, '--force', '--grace-period=0']);
        // The substitute has the name only, not the DaemonSet's labels: with them the controller would
        // adopt it (an orphan its selector matches) and delete it as a second Pod on the node, and the
        // fallback's next step would take it for the old Pod. It requests nothing, so the surge Pod fits
        // whether the scheduler binds it before or after the substitute exists: the run's end does not
        // depend on that race.
        await cluster.create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: oldName, namespace: w.ns, labels: { 'par-test': 'substitute' } },
          spec: {
            nodeName: swap,
            terminationGracePeriodSeconds: 0,
            containers: [{ name: 'other', image: 'registry.example/other:1' }],
          },
        });
        const substituteUid = (await cluster.getJson('pod', oldName, w.ns))!.metadata.uid as string;
        expect(substituteUid).not.toBe(old.metadata.uid);
        cli.child.kill('SIGCONT');
        const { code } = await cli.exit;
        const skipped = `Pod ${oldName} was replaced meanwhile (UID changed); not deleted`;
        // The apiserver refused the delete (409, the UID precondition) and the run says so.
        expect(cli.stderr()).toContain(skipped);
        const substitute = await cluster.getJson('pod', oldName, w.ns);
        expect(substitute?.metadata.uid).toBe(substituteUid);
        expect(substitute?.metadata.deletionTimestamp).toBeUndefined();
        // Then the run goes on (capacity-fallback.ts: a skipped step, the wait continues): with the old
        // Pod gone the surge Pod schedules and becomes Ready, and the rollout completes, deleting nothing.
        expect(code, cli.stderr()).toBe(0);
        const out = JSON.parse(cli.stdout()) as {
          strategyRestored: boolean;
          fallbackSteps: { node: string; deletedPod?: string; skipped?: string }[];
        };
        expect(out.fallbackSteps).toContainEqual({ node: swap, skipped });
        expect(out.fallbackSteps.filter((s) => s.deletedPod)).toEqual([]);
        expect(out.strategyRestored).toBe(true);
        const ds = (await cluster.getJson('daemonset', 'swap', w.ns))!;
        expect(ds.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
        expect((await auditEvents('DaemonSet', 'swap')).map((e) => e.reason)).toEqual(['RolloutStarted', 'RolloutCompleted']);
        await allReady('swap', 1);
        expect((await readyPods('swap'))[0]!.metadata.annotations?.[FINGERPRINT]).toBe(kid);
      } finally {
        killIfRunning(cli);
        if (oldName) await cluster.kubectl(['delete', 'pod', oldName, '-n', w.ns, '--wait=false']);
        await cluster.removeNodes([swap]);
      }
    });
  });
});
