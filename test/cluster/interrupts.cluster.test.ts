import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interruptAt } from '../e2e/interrupt-at.js';
import { runCli } from '../e2e/run-cli.js';
import { type AgentWorld, agentWorld } from './agent-world.js';
import { CLUSTER_KIND, eventually, startTestCluster, type TestCluster, workloadsRun } from './test-cluster.js';

// Issue 23's Kubernetes points about stopping and refusing, on the cluster of this run (emulator or
// real control plane): SIGINT/SIGTERM at a named boundary of `rollout` and of a rotation's
// --rollout (the run stopped at its failpoint, the signal sent to its main thread: interrupt-at.ts),
// and a Deployment whose nodes have no room refused at once, with one exit code in both modes.
// Every assertion reads the cluster through kubectl.

const FINGERPRINT = 'par-identity.datadoghq.com/identity-fingerprint';
let cluster: TestCluster;
let w: AgentWorld;
const pool = `stop-${randomBytes(3).toString('hex')}`;
const nodes = [`${pool}-a`, `${pool}-b`];
const tiny = `${pool}-tiny`;

beforeAll(async () => {
  cluster = await startTestCluster();
  if (!workloadsRun.skip)
    await cluster.addNodes([
      ...nodes.map((name) => ({ name, cpu: '2', memory: '4Gi', labels: { 'par-test-pool': pool } })),
      // One CPU: a 600m replica fits, its surge twin does not.
      { name: tiny, cpu: '1', memory: '4Gi', labels: { 'par-test-pool': `${pool}-t` } },
    ]);
  w = await agentWorld(cluster, 'stop');
  expect((await w.rotate(['--no-verify'])).code).toBe(0);
});
afterAll(async () => {
  if (!workloadsRun.skip) await cluster?.removeNodes([...nodes, tiny]);
  await w?.close();
  await cluster?.close();
});

async function deployment(name: string, replicas: number, selectPool = pool) {
  await cluster.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: w.ns },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
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
      },
    },
  });
  await eventually(
    async () => {
      const d = await cluster.getJson('deployment', name, w.ns);
      return d && (d.status?.availableReplicas ?? 0) === replicas && (d.status?.updatedReplicas ?? 0) === replicas;
    },
    `${replicas} available replicas of ${name}`,
    60_000,
    250,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects read by test assertions only
const live = async (name: string) => (await cluster.getJson('deployment', name, w.ns)) as Record<string, any>;
const env = () => ({ ...w.env, PAR_IDENTITY_ROLLOUT_POLL_MS: '200' }) as Record<string, string>;
const rolloutArgs = (name: string, ...extra: string[]) => [
  'rollout',
  `deployment/${name}`,
  '-n',
  w.ns,
  '--kubeconfig',
  cluster.adminKubeconfig,
  '--poll-interval',
  '200ms',
  ...extra,
];

/** Exactly one JSON document on stdout. */
function oneDocument(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  expect(lines, stdout).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe(`stopped by a signal, on the ${CLUSTER_KIND} cluster`, () => {
  it.skipIf(workloadsRun.skip)(
    `rollout: SIGINT once its restart patch is under way → the restart undone, the strategy restored, exit 130, one JSON document naming the resume command ${workloadsRun.label}`,
    async () => {
      await deployment('cut', 1);
      const before = await live('cut');
      const run = await interruptAt(rolloutArgs('cut', '--json'), env(), 'rollout-before-patch', ['SIGINT']);
      expect(run.code, run.stderr).toBe(130);
      const doc = oneDocument(run.stdout);
      expect(doc).toMatchObject({
        command: 'rollout',
        code: 'INTERRUPTED',
        exitCode: 130,
        details: { step: 'rollout', phase: 'during', signal: 'SIGINT' },
      });
      expect(doc.message).toMatch(
        /^stopped by SIGINT during the rollout of deployment\/cut in \S+, \d+ s in: its restart was undone and the original strategy restored; restarted before the stop: \d+ new Pods? .*; not restarted: \d+ Pods? still running/,
      );
      expect(doc.hint).toBe(
        `Resume with \`par-identity rollout deployment/cut -n ${w.ns} --kubeconfig ${cluster.adminKubeconfig}\`: it restarts every Pod again, create-before-delete.`,
      );
      const after = await live('cut');
      expect(after.spec.strategy).toEqual(before.spec.strategy);
      expect(after.spec.template.metadata.annotations?.[FINGERPRINT]).toBeUndefined();
      expect(after.spec.template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt']).toBeUndefined();
    },
  );

  it.skipIf(workloadsRun.skip)(
    `rollout: SIGTERM before its restart (while the check reads) → nothing changed, exit 143 ${workloadsRun.label}`,
    async () => {
      await deployment('early', 1);
      const generation = (await live('early')).metadata.generation;
      const run = await interruptAt(rolloutArgs('early', '--json'), env(), 'rollout-before-check', ['SIGTERM']);
      expect(run.code, run.stderr).toBe(143);
      expect(oneDocument(run.stdout)).toMatchObject({
        code: 'INTERRUPTED',
        exitCode: 143,
        message: `stopped by SIGTERM before the restart of deployment/early in ${w.ns}: nothing was changed, no Pod restarted`,
      });
      expect((await live('early')).metadata.generation).toBe(generation);
    },
  );

  it.skipIf(workloadsRun.skip)(
    `rotate-par-identity --rollout: SIGINT during the rollout → the new identity stays in the Secret, the restart is undone, the hint names \`par-identity rollout\` ${workloadsRun.label}`,
    async () => {
      await deployment('agent', 1);
      const previous = (await w.secretData()).urn;
      const before = await live('agent');
      const run = await interruptAt(
        [
          'rotate-par-identity',
          '-c',
          w.dir,
          '--kubeconfig',
          cluster.adminKubeconfig,
          '--no-verify',
          '--rollout',
          'deployment/agent',
          '--json',
        ],
        env(),
        'rollout-before-patch',
        ['SIGINT'],
      );
      expect(run.code, run.stderr).toBe(130);
      const doc = oneDocument(run.stdout);
      const data = await w.secretData();
      expect(data.urn).not.toBe(previous);
      expect(data.previous_urn).toBe(previous);
      expect(doc).toMatchObject({ command: 'rotate-par-identity', code: 'INTERRUPTED', details: { step: 'rollout', phase: 'during' } });
      expect(doc.message).toContain(
        `the new identity ${data.urn} is written to Secret ${w.ns}/private-action-runner-identity and not verified (--no-verify); the rollout was stopped: its restart was undone`,
      );
      expect(doc.hint).toContain(
        `Restart the workload when you want: \`par-identity rollout deployment/agent -n ${w.ns} --kubeconfig ${cluster.adminKubeconfig}\``,
      );
      expect((await live('agent')).spec.template.metadata.annotations ?? {}).toEqual(before.spec.template.metadata.annotations ?? {});
    },
  );

  it('rotate-par-identity: SIGTERM after the enrollment, before the write → the Secret keeps its identity, the key sent pending in it, exit 143', async () => {
    const before = await w.secretData();
    const run = await interruptAt(
      ['rotate-par-identity', '-c', w.dir, '--kubeconfig', cluster.adminKubeconfig, '--no-verify', '--json'],
      env(),
      'after-enroll',
      ['SIGTERM'],
    );
    expect(run.code, run.stderr).toBe(143);
    expect(oneDocument(run.stdout).message).toContain('(data key pending_private_key), not in service');
    const { pending_private_key: pending, ...after } = await w.secretData();
    expect(after.urn).toBe(before.urn);
    expect(after.private_key).toBe(before.private_key);
    expect(pending).toContain('"runner_name"');
    // status names it; the next rotation sets it aside (as after a kill: rotate-par-identity.cluster.test.ts).
    const status = await w.run(['status', '--secret', '-c', w.dir, '--kubeconfig', cluster.adminKubeconfig, '--json']);
    expect(status.code, status.stderr).toBe(15);
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
  });
});

describe(`a Deployment with no room for its surge replica, on the ${CLUSTER_KIND} cluster`, () => {
  it.skipIf(workloadsRun.skip)(
    `NO_ROOM: --check exits the same with and without --json; a real rollout refuses at once (exit 10), nothing changed ${workloadsRun.label}`,
    async () => {
      // Its only eligible node is full for a second replica; the roomy nodes of the other pool are not
      // the Deployment's (nodeSelector), so they are no room for it.
      await deployment('boxed', 1, `${pool}-t`);
      const human = await runCli(rolloutArgs('boxed', '--check'), { env: env(), timeoutMs: 60_000 });
      const json = await runCli(rolloutArgs('boxed', '--check', '--json'), { env: env(), timeoutMs: 60_000 });
      expect(human.stdout).toContain('[NO_ROOM]');
      expect(JSON.parse(json.stdout).check).toMatchObject({
        verdict: 'blocked',
        nodes: [expect.objectContaining({ node: tiny, verdict: 'needs fallback' })],
      });
      expect(human.code).toBe(json.code);
      expect(json.code).toBe(10);
      const generation = (await live('boxed')).metadata.generation;
      const run = await runCli(rolloutArgs('boxed', '--timeout', '10m'), { env: env(), timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(10);
      expect(run.stderr).toContain('error[NEEDS_FALLBACK]');
      expect(run.stderr).toContain(tiny);
      expect((await live('boxed')).metadata.generation).toBe(generation);
    },
  );
});
