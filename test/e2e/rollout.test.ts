import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type KubeEmulator, type KubeObject, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';
import { encodePrivateJwk, generateIdentityKey } from '../../src/identity/index.js';
import { kubectlIn, kubectlPath, kubectlRequired } from '../emulators/kubectl-runner.js';
import { interruptAt, stopped } from './interrupt-at.js';
import { runCli, startCli } from './run-cli.js';
import { storedDeploymentRollouts } from './stored-deployment.js';

// `par-identity rollout` against the Kubernetes emulator: what the tool decides, patches, records and
// restores, on a Deployment whose rollouts the stored-Pod fixture finishes (or stalls). Workload
// behaviour itself (surge, DaemonSets, the capacity fallback, Pods that kwok makes Ready, SIGKILL of a
// DaemonSet rollout) runs on the real control plane only: test/cluster/rollout*.cluster.test.ts and
// interrupts.cluster.test.ts.

const NS = 'datadog';
let emu: KubeEmulator;
let dir: string;
let kubeconfig: string;
let kid: string;
/** The stored-Pod fixture of deployment/par (createDeployment). */
let rollouts: { newPodsReady: boolean };

// Test-side view of stored objects: the fields these assertions walk, loosely typed on purpose.
// biome-ignore lint/suspicious/noExplicitAny: nested Kubernetes fields read by assertions only
type Obj = KubeObject & { spec?: any; status?: any };

function container(extra: Record<string, unknown> = {}) {
  return {
    name: 'runner',
    image: 'par:1',
    readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
    resources: { requests: { cpu: '500m', memory: '256Mi' } },
    envFrom: [{ secretRef: { name: 'private-action-runner-identity' } }],
    ...extra,
  };
}

/** The strategy the apiserver defaults a Deployment to (the emulator stores it as given). */
const DEFAULT_STRATEGY = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };

function createDeployment(replicas = 2, podContainer = container()) {
  emu.createObject({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'par', namespace: NS },
    spec: {
      replicas,
      strategy: DEFAULT_STRATEGY,
      selector: { matchLabels: { app: 'par' } },
      template: { metadata: { labels: { app: 'par' } }, spec: { containers: [podContainer] } },
    },
  } as KubeObject);
  rollouts = storedDeploymentRollouts(emu, NS, 'par');
}

const pods = () => emu.listObjects('v1', 'Pod', NS).filter((p) => p.metadata.labels?.app === 'par') as Obj[];
const ready = (p: Obj) =>
  !p.metadata.deletionTimestamp &&
  (p.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
/** The audit Events par-identity recorded on the workload, oldest first, in the events.k8s.io/v1 view. */
const auditEvents = (kind: string) =>
  emu
    .listObjects('events.k8s.io/v1', 'Event', NS)
    .filter((e) => e['reportingController'] === 'par-identity' && (e['regarding'] as { kind: string; name: string }).kind === kind)
    .sort((a, b) => String(a['eventTime']).localeCompare(String(b['eventTime']))) as Obj[];
const deploy = () => emu.getObject('apps/v1', 'Deployment', NS, 'par') as Obj;

async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const allReady = (count: number) => until(() => pods().filter(ready).length === count && pods().length === count, `${count} Ready Pods`);

const rollout = (...args: string[]) =>
  runCli(['rollout', ...args, '-n', NS, '--kubeconfig', kubeconfig, '--poll-interval', '30ms'], { timeoutMs: 30_000 });

beforeEach(async () => {
  emu = await startKubeEmulator();
  seedNamespaces(emu, [NS]);
  // Stored nodes with room for a surge replica (the stored Pods run on n1).
  for (const name of ['n1', 'n2', 'n3']) {
    emu.createObject({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: { allocatable: { cpu: '2', memory: '4Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
    } as KubeObject);
  }
  const key = generateIdentityKey();
  kid = key.kid;
  emu.createObject({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'private-action-runner-identity', namespace: NS },
    type: 'Opaque',
    data: {
      private_key: Buffer.from(encodePrivateJwk(key)).toString('base64'),
      urn: Buffer.from('urn:dd:apps:on-prem-runner:us1:1:r').toString('base64'),
    },
  } as KubeObject);
  dir = await mkdtemp(join(tmpdir(), 'par-rollout-'));
  kubeconfig = join(dir, 'kubeconfig');
  await emu.writeKubeconfig(kubeconfig, { token: emu.adminToken, namespace: NS });
});

afterEach(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

describe('rollout of a Deployment', () => {
  it.skipIf(!kubectlPath && !kubectlRequired)('kubectl describe deployment shows the rollout Events', async () => {
    createDeployment(1);
    await allReady(1);
    expect((await rollout('deployment/par')).code).toBe(0);
    const run = await kubectlIn(dir, kubeconfig)(['describe', 'deployment', 'par', '-n', NS]);
    expect(run.stderr).toBe('');
    const events = run.stdout.slice(run.stdout.indexOf('\nEvents:'));
    expect(events).toMatch(
      new RegExp(`Normal\\s+RolloutStarted\\s+\\S+\\s+par-identity\\s+restart with create-before-delete .*identity fingerprint ${kid}`),
    );
    expect(events).toMatch(/Normal\s+RolloutCompleted\s+\S+\s+par-identity\s+every Pod runs the new template/);
  });

  it('a namespaced Role is enough: no Events, nodes or PDB rights still roll out, with warnings that say what was skipped', async () => {
    createDeployment(1);
    await allReady(1);
    const limited = join(dir, 'no-events.kubeconfig');
    emu.addToken('no-events', {
      user: `system:serviceaccount:${NS}:rollout`,
      namespace: NS,
      rules: [
        { apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['par'], verbs: ['get', 'patch'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['private-action-runner-identity'], verbs: ['get'] },
      ],
    });
    await emu.writeKubeconfig(limited, { token: 'no-events', namespace: NS });
    const run = await runCli(['rollout', 'deployment/par', '-n', NS, '--kubeconfig', limited, '--poll-interval', '30ms', '--json'], {
      timeoutMs: 30_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as {
      action: string;
      events: { recorded: string[]; warnings: string[] };
      check: { capacityChecked: boolean; findings: { code: string; severity: string }[] };
    };
    expect(out.action).toBe('rolled-out');
    expect(out.check.capacityChecked).toBe(false);
    expect(out.check.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'CAPACITY_UNCHECKED', severity: 'warning' }),
        expect.objectContaining({ code: 'PDB_UNCHECKED' }),
      ]),
    );
    // Nothing cluster-scoped was attempted beyond the one forbidden nodes list.
    const forbidden = emu.requests
      .filter((r) => r.user === `system:serviceaccount:${NS}:rollout` && r.status === 403)
      .map((r) => `${r.verb} ${r.resource} ${r.namespace}`);
    expect(forbidden.sort()).toEqual(
      ['create events datadog', 'create events datadog', 'list nodes ', 'list poddisruptionbudgets datadog'].sort(),
    );
    expect(out.events.recorded).toEqual([]);
    expect(out.events.warnings).toHaveLength(2);
    expect(run.stderr).toContain('Event RolloutStarted not recorded on Deployment datadog/par: forbidden');
    expect(auditEvents('Deployment')).toEqual([]);
  });

  it('SIGTERM during the wait with --json: one JSON document, exit 143, counts in details', async () => {
    createDeployment(2);
    await allReady(2);
    rollouts.newPodsReady = false;
    const run = startCli(['rollout', 'deployment/par', '-n', NS, '--kubeconfig', kubeconfig, '--poll-interval', '30ms', '--json'], {
      env: { NO_COLOR: '1' },
    });
    await until(() => pods().some((p) => p.metadata.annotations?.['par-identity.datadoghq.com/identity-fingerprint']), 'a new Pod created');
    run.child.kill('SIGTERM');
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(143);
    const lines = run.stdout().trim().split('\n');
    expect(lines).toHaveLength(1);
    const doc = JSON.parse(lines[0]!);
    expect(doc).toMatchObject({
      status: 'error',
      command: 'rollout',
      code: 'INTERRUPTED',
      exitCode: 143,
      details: { step: 'rollout', phase: 'during', signal: 'SIGTERM', notRestartedPods: 2 },
    });
    expect(doc.details.restartedPods).toBeGreaterThan(0);
    expect(doc.hint).toContain('Resume with `par-identity rollout deployment/par -n datadog');
    expect(deploy().spec.template.metadata.annotations?.['par-identity.datadoghq.com/identity-fingerprint']).toBeUndefined();
  });

  it('--dry-run prints the patches and changes nothing', async () => {
    createDeployment(1);
    await allReady(1);
    const generation = deploy().metadata.generation;
    const run = await rollout('deployment/par', '--dry-run', '--json');
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { action: string; patches: object[] };
    expect(out.action).toBe('dry-run');
    expect(JSON.stringify(out.patches[0])).toContain('kubectl.kubernetes.io/restartedAt');
    expect(deploy().metadata.generation).toBe(generation);
    // Server-side, as `--rollout --dry-run` of a rotation: the apiserver judged the very first patch.
    const judged = emu.requests.filter((r) => r.resource === 'deployments' && r.verb === 'patch' && r.query.dryRun === 'All');
    expect(judged).toHaveLength(1);
    expect(emu.requests.filter((r) => r.resource === 'deployments' && r.verb === 'patch' && r.query.dryRun !== 'All')).toEqual([]);
  });

  it('--dry-run fails where the real run would: a token that may not patch → exit 9 KUBE_FORBIDDEN, nothing changed', async () => {
    createDeployment(1);
    await allReady(1);
    const generation = deploy().metadata.generation;
    const limited = join(dir, 'no-patch.kubeconfig');
    emu.addToken('no-patch', {
      user: `system:serviceaccount:${NS}:no-patch`,
      namespace: NS,
      rules: [
        { apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['par'], verbs: ['get'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      ],
    });
    await emu.writeKubeconfig(limited, { token: 'no-patch', namespace: NS });
    const run = await runCli(['rollout', 'deployment/par', '-n', NS, '--kubeconfig', limited, '--dry-run'], { timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[KUBE_FORBIDDEN]');
    expect(run.stderr).toContain('server-side dry run of the restart patch of deployment/par');
    expect(deploy().metadata.generation).toBe(generation);
  });

  it('a paused Deployment is refused with --surge', async () => {
    createDeployment(1);
    await allReady(1);
    const d = deploy();
    d.spec.paused = true;
    emu.updateObject(d);
    const run = await rollout('deployment/par', '--surge');
    expect(run.code).toBe(10);
    expect(run.stderr).toContain('paused');
  });

  it('a blocker other than room (no readinessProbe): --check says BLOCKED and exits 10 (SURGE_BLOCKED); a rollout without --surge restarts with the workload’s own strategy, says why it did not surge, exits 0', async () => {
    createDeployment(2, container({ readinessProbe: undefined }));
    await allReady(2);
    for (const json of [false, true]) {
      const check = await rollout('deployment/par', '--check', ...(json ? ['--json'] : []));
      expect(check.code, check.stderr).toBe(10);
      if (json)
        expect(JSON.parse(check.stdout)).toMatchObject({
          status: 'blocked',
          code: 'SURGE_BLOCKED',
          exitCode: 10,
          action: 'checked',
          check: { verdict: 'blocked' },
        });
      else expect(check.stdout).toContain('BLOCKED: a container has no readinessProbe');
    }
    const run = await rollout('deployment/par', '--timeout', '10m', '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'ok', exitCode: 0, action: 'rolled-out', surged: false });
    expect(run.stderr).not.toContain('BLOCKED');
    expect(run.stderr).toContain("a surge is not safe; restarted with the workload's own strategy");
    expect(run.stderr).toContain('no surge: a container has no readinessProbe');
  });

  it('a never-Ready replacement stalls the rollout, the old Pods keep running, and the strategy is restored', async () => {
    createDeployment(2);
    await allReady(2);
    const oldNames = pods()
      .map((p) => p.metadata.name)
      .sort();
    rollouts.newPodsReady = false;
    // --timeout counts from the command's start: the check before the wait must fit in it.
    const run = await rollout('deployment/par', '--timeout', '3s');
    expect(run.code, run.stderr).toBe(10);
    expect(run.stderr).toContain('error[ROLLOUT_TIMEOUT]');
    expect(
      pods()
        .filter((p) => oldNames.includes(p.metadata.name) && ready(p))
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(oldNames);
    const events = auditEvents('Deployment');
    expect(events.map((e) => [e['reason'], e['type']])).toEqual([
      ['RolloutStarted', 'Normal'],
      ['RolloutFailed', 'Warning'],
    ]);
    expect(String(events[1]!['note'])).toContain('ROLLOUT_TIMEOUT');
    expect(deploy().spec.strategy).toEqual(DEFAULT_STRATEGY);
  });

  it('SIGINT before the restart (while the check reads): nothing changed, exit 130', async () => {
    createDeployment(2);
    await allReady(2);
    const generation = deploy().metadata.generation;
    const writes = emu.requests.length;
    const run = await interruptAt(
      ['rollout', 'deployment/par', '-n', NS, '--kubeconfig', kubeconfig, '--json'],
      { NO_COLOR: '1' },
      'rollout-before-check',
      ['SIGINT'],
    );
    expect(run.code, run.stderr).toBe(130);
    expect(JSON.parse(run.stdout)).toMatchObject({
      code: 'INTERRUPTED',
      exitCode: 130,
      message: 'stopped by SIGINT before the restart of deployment/par in datadog: nothing was changed, no Pod restarted',
      details: { phase: 'before', restartedPods: 0 },
    });
    expect(emu.requests.slice(writes).filter((r) => r.method !== 'GET')).toHaveLength(0);
    expect(deploy().metadata.generation).toBe(generation);
  });

  it('DaemonSet: --fallback without node rights is refused before any change, naming the ClusterRole', async () => {
    // A DaemonSet as its controller leaves it on n1..n3, stored: the refusal comes before any change.
    const ds = emu.createObject({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'par', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'par' } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        template: { metadata: { labels: { app: 'par' } }, spec: { containers: [container()] } },
      },
      status: {
        observedGeneration: 1,
        desiredNumberScheduled: 3,
        currentNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberReady: 3,
        numberAvailable: 3,
      },
    } as KubeObject);
    for (const node of ['n1', 'n2', 'n3']) {
      emu.createObject({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `par-${node}`,
          namespace: NS,
          labels: { app: 'par', 'controller-revision-hash': 'r1' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'par', uid: ds.metadata.uid, controller: true }],
        },
        spec: { nodeName: node, containers: [container()] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      } as KubeObject);
    }
    const generation = ds.metadata.generation;
    const limited = join(dir, 'ds-role.kubeconfig');
    emu.addToken('ds-role', {
      user: `system:serviceaccount:${NS}:rollout`,
      namespace: NS,
      rules: [
        { apiGroups: ['apps'], resources: ['daemonsets'], resourceNames: ['par'], verbs: ['get', 'patch'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['list', 'patch', 'delete'] },
      ],
    });
    await emu.writeKubeconfig(limited, { token: 'ds-role', namespace: NS });
    const run = await runCli(['rollout', 'daemonset/par', '--fallback', '-n', NS, '--kubeconfig', limited], { timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(10);
    expect(run.stderr).toContain('error[FALLBACK_UNAVAILABLE]');
    expect(run.stderr).toContain('par-identity-rollout-capacity');
    expect(emu.getObject('apps/v1', 'DaemonSet', NS, 'par')!.metadata.generation).toBe(generation);
    // --check with the same token says what it could not check.
    const check = await runCli(['rollout', 'daemonset/par', '--check', '-n', NS, '--kubeconfig', limited], { timeoutMs: 30_000 });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain('[CAPACITY_UNCHECKED]');
    expect(check.stdout).toContain('no list on nodes');
  });

  it('an apiserver that stops answering during the check: --timeout cuts it (KUBE_TIMEOUT, the command deadline), nothing changed', async () => {
    createDeployment(2);
    await allReady(2);
    const generation = deploy().metadata.generation;
    emu.faults.hang({ verb: 'list', resource: 'pods' });
    const run = await rollout('deployment/par', '--timeout', '2s', '--json');
    emu.faults.clear();
    expect(run.code, run.stderr).toBe(9);
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({ code: 'KUBE_TIMEOUT', exitCode: 9 });
    expect(out.message).toContain('command deadline');
    expect(emu.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
    expect(deploy().metadata.generation).toBe(generation);
  });

  it('a missing workload is WORKLOAD_MISSING, exit 10, in both modes', async () => {
    for (const json of [false, true]) {
      const run = await rollout('deployment/nope', ...(json ? ['--json'] : []));
      expect(run.code, run.stderr).toBe(10);
      expect(run.stderr).toContain('error[WORKLOAD_MISSING]');
      if (json) expect(JSON.parse(run.stdout)).toMatchObject({ code: 'WORKLOAD_MISSING', exitCode: 10 });
    }
  });
});

describe('a rollout killed while it has the strategy changed (SIGKILL at each boundary)', () => {
  const RECORD = 'par-identity.datadoghq.com/original-strategy';
  const env = { NO_COLOR: '1' };
  const killedAt = async (target: string, point: string) => {
    const run = await runCli(['rollout', target, '-n', NS, '--kubeconfig', kubeconfig, '--poll-interval', '30ms'], {
      env: { ...env, PAR_IDENTITY_FAILPOINT: point },
      timeoutMs: 30_000,
    });
    expect(run.signal, run.stderr).toBe('SIGKILL');
  };
  type Leftover = { state: string; message: string; action: string; original: Record<string, unknown>; current: Record<string, unknown> };
  const statusPods = (target: string) =>
    runCli(
      [
        'status',
        '--secret',
        '--secret-name',
        'private-action-runner-identity',
        '-n',
        NS,
        '--kubeconfig',
        kubeconfig,
        '--pods',
        target,
        '--json',
      ],
      { env, timeoutMs: 30_000 },
    );

  for (const point of ['rollout-after-patch', 'rollout-during-wait', 'rollout-before-restore']) {
    it(`Deployment killed at ${point}: the original is recorded on it; --check and status --pods say so; the next rollout restores it first`, async () => {
      createDeployment(2);
      await allReady(2);
      expect(deploy().spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });
      await killedAt('deployment/par', point);
      // What the kill left: the strategy changed, and beside it the record of the original.
      expect(deploy().spec.strategy.rollingUpdate).toEqual({ maxSurge: '25%', maxUnavailable: 0 });
      const record = JSON.parse(deploy().metadata.annotations?.[RECORD] ?? '{}') as { original: unknown; changed: unknown };
      expect(record.original).toEqual({ type: 'RollingUpdate', maxSurge: '25%', maxUnavailable: '25%' });

      const check = await rollout('deployment/par', '--check', '--json');
      expect(check.code, check.stderr).toBe(0);
      const found = (JSON.parse(check.stdout) as { interruptedRollout: Leftover }).interruptedRollout;
      expect(found).toMatchObject({
        state: 'interrupted',
        action: 'reported',
        original: { maxSurge: '25%', maxUnavailable: '25%' },
        current: { maxUnavailable: 0 },
      });
      expect(found.message).toMatch(
        /^strategy changed by an interrupted par-identity rollout at \d{4}-\d\d-\d\dT[\d:]+Z \(original: maxSurge 25%, maxUnavailable 25%; now: maxSurge 25%, maxUnavailable 0; pid \d+ is gone\)$/,
      );
      const text = await rollout('deployment/par', '--check');
      expect(text.stdout).toContain('strategy: strategy changed by an interrupted par-identity rollout at');
      expect(text.stdout).toContain('the next `rollout` restores it first');

      const status = await statusPods('deployment/par');
      expect(JSON.parse(status.stdout), status.stderr).toMatchObject({
        interruptedRollout: { state: 'interrupted', original: { maxUnavailable: '25%' } },
      });
      expect(deploy().spec.strategy.rollingUpdate.maxUnavailable).toBe(0);

      const next = await rollout('deployment/par', '--json');
      expect(next.code, next.stderr).toBe(0);
      const out = JSON.parse(next.stdout) as { interruptedRollout: Leftover; action: string; strategyRestored: boolean };
      expect(out.interruptedRollout).toMatchObject({ state: 'interrupted', action: 'restored' });
      expect(next.stderr).toContain('restored first: the original strategy is back and the record removed, then this rollout goes on');
      expect(deploy().spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });
      expect(deploy().metadata.annotations?.[RECORD]).toBeUndefined();
      // Nothing left: the next check finds no record.
      expect(JSON.parse((await rollout('deployment/par', '--check', '--json')).stdout).interruptedRollout).toBeUndefined();
    });
  }

  it('strategy changed by hand after the kill: never clobbered, the record removed, and said so', async () => {
    createDeployment(2);
    await allReady(2);
    await killedAt('deployment/par', 'rollout-after-patch');
    const d = deploy();
    d.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: 1 } };
    delete d.metadata.resourceVersion;
    emu.updateObject(d);
    const check = await rollout('deployment/par', '--check', '--json');
    expect(JSON.parse(check.stdout).interruptedRollout).toMatchObject({
      state: 'changed-since',
      current: { maxSurge: 2, maxUnavailable: 1 },
    });
    const next = await rollout('deployment/par', '--json');
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ interruptedRollout: { state: 'changed-since', action: 'record-removed' } });
    expect(next.stderr).toContain('changed since by someone else (now: maxSurge 2, maxUnavailable 1): left as it is');
    // Their strategy stays, not the recorded 25%/25%.
    expect(deploy().spec.strategy.rollingUpdate).toEqual({ maxSurge: 2, maxUnavailable: 1 });
    expect(deploy().metadata.annotations?.[RECORD]).toBeUndefined();
  });

  const stopInWait = async () => {
    const run = startCli(['rollout', 'deployment/par', '-n', NS, '--kubeconfig', kubeconfig, '--poll-interval', '30ms', '--json'], {
      env: { ...env, PAR_IDENTITY_FAILPOINT: 'rollout-during-wait:stop' },
    });
    run.child.stdin.end();
    await stopped(run);
    return run;
  };

  it('a rollout still running is never restored by another: --check says in progress, a second rollout is LOCKED; once it is killed, the next restores', async () => {
    createDeployment(2);
    await allReady(2);
    const first = await stopInWait();
    const check = await rollout('deployment/par', '--check', '--json');
    expect(JSON.parse(check.stdout).interruptedRollout).toMatchObject({ state: 'in-progress' });
    expect(JSON.parse(check.stdout).interruptedRollout.message).toMatch(
      new RegExp(`^strategy changed by a par-identity rollout in progress since .* \\(pid ${first.child.pid} on `),
    );
    const second = await rollout('deployment/par', '--json');
    expect(JSON.parse(second.stdout)).toMatchObject({ code: 'LOCKED' });
    expect(second.code).toBe(JSON.parse(second.stdout).exitCode);
    expect(deploy().spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    first.child.kill('SIGKILL');
    await first.exit;
    const third = await rollout('deployment/par', '--json');
    expect(third.code, third.stderr).toBe(0);
    expect(JSON.parse(third.stdout)).toMatchObject({ interruptedRollout: { state: 'interrupted', action: 'restored' } });
    expect(deploy().spec.strategy.rollingUpdate).toEqual({ maxSurge: '25%', maxUnavailable: '25%' });
  }, 90_000);

  it('the strategy changed by hand during a run: left as it is at the end, the record removed, and said so', async () => {
    createDeployment(2);
    await allReady(2);
    const first = await stopInWait();
    const d = deploy();
    d.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 0 } };
    delete d.metadata.resourceVersion;
    emu.updateObject(d);
    first.child.kill('SIGCONT');
    const { code } = await first.exit;
    expect(code, first.stderr()).toBe(0);
    expect(JSON.parse(first.stdout())).toMatchObject({
      strategyRestored: false,
      strategyChangedMeanwhile: { maxSurge: 3, maxUnavailable: 0 },
    });
    expect(first.stderr()).toContain('was changed by someone else during this rollout (now maxSurge 3, maxUnavailable 0');
    expect(deploy().spec.strategy.rollingUpdate).toEqual({ maxSurge: 3, maxUnavailable: 0 });
    expect(deploy().metadata.annotations?.[RECORD]).toBeUndefined();
  }, 90_000);
});
