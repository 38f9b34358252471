import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../emulators/enrollment/index.js';
import { helmClusterAgentObjects } from '../../emulators/helm-cluster-agent.js';
import { decodeIdentity } from '../../src/identity/index.js';
import { BIN, runCli } from '../e2e/run-cli.js';
import { type AgentWorld, agentWorld } from './agent-world.js';
import { canI } from '../emulators/access-review.js';
import { CLUSTER_KIND, eventually, startTestCluster, type TestCluster, issueToken, workloadsRun } from './test-cluster.js';

// deploy/rotation-cronjob.yaml as an operator installs it: applied server-side with strict field
// validation, a Job made from the CronJob (`kubectl create job --from=cronjob/...`), then the
// CronJob's own command (its args; it has no env) run off-cluster, as from a workstation, with a
// TokenRequest token of its ServiceAccount (`kubectl create token`), against a cluster agent in the
// Helm chart's layout: once with the Role as shipped and once for each verb taken out of it: each
// missing verb fails the run before anything is enrolled.

/**
 * The command names the agent with helper "agent"'s `--agent deployment/NAME` (issue 30): the tests
 * that run it wait for it, and turn on by themselves once the built binary has it.
 */
const agentFlagShipped = spawnSync(process.execPath, [BIN, 'rotate-par-identity', '--help'], { encoding: 'utf8' }).stdout.includes(
  '--agent ',
);

const DEPLOY = resolve(import.meta.dirname, '../../deploy');
const AGENT = 'datadog-cluster-agent';
const ROTATOR = 'par-identity-rotator';
/** The identity Secret the manifests name (the Helm chart's identitySecretName). */
const IDENTITY = 'datadog-private-action-runner-identity';
let cluster: TestCluster;
let w: AgentWorld;
const node = `deploy-${randomBytes(3).toString('hex')}`;

// biome-ignore lint/suspicious/noExplicitAny: manifest documents walked by the test only
type Doc = any;
let docs: Doc[];

/** The manifests with the namespace `datadog` replaced by the test's own. */
async function manifests(ns: string): Promise<Doc[]> {
  const text = await readFile(join(DEPLOY, 'rotation-cronjob.yaml'), 'utf8');
  return parseAllDocuments(text).map((d) => {
    const o = d.toJSON();
    o.metadata.namespace = ns;
    for (const s of o.subjects ?? []) s.namespace = ns;
    return o;
  });
}

const cronJob = () => docs.find((d) => d.kind === 'CronJob');
const role = () => docs.find((d) => d.kind === 'Role');

/** The CronJob container's args: the whole command, no environment. */
function cronJobArgs(): string[] {
  const c = cronJob().spec.jobTemplate.spec.template.spec.containers[0];
  expect(c.env ?? [], 'the CronJob carries no copy of the agent settings').toEqual([]);
  expect(c.envFrom ?? []).toEqual([]);
  return c.args;
}

beforeAll(async () => {
  cluster = await startTestCluster();
  if (!workloadsRun.skip) await cluster.addNodes([{ name: node, cpu: '4', memory: '8Gi', labels: { 'par-test-pool': node } }]);
  w = await agentWorld(cluster, 'deploy');
  docs = await manifests(w.ns);
  // The agent's state before the first scheduled run: its identity Secret and cluster-id ConfigMap
  // (made by a first rotation as admin, in its Pod), and the cluster agent as the Helm chart deploys
  // it: its settings as env, the keys from `datadog-secret`, the enrollment emulator as dd_url.
  expect((await w.rotate(['--no-verify', '--secret-name', IDENTITY])).code).toBe(0);
  const [token, keys, deployment] = helmClusterAgentObjects({
    namespace: w.ns,
    name: AGENT,
    clusterName: 'e2e-cluster',
    apiKey: DEFAULT_API_KEY,
    appKey: DEFAULT_APP_KEY,
    ddUrl: w.enrollment.url,
    replicas: 1,
  });
  const pod = deployment!.spec.template.spec;
  pod.nodeSelector = { 'par-test-pool': node };
  pod.terminationGracePeriodSeconds = 0;
  pod.containers[0].readinessProbe = { httpGet: { path: '/ready', port: 5555 } };
  await cluster.create(token!, keys!, deployment!);
});
afterAll(async () => {
  // Its cluster agent would be found by a later file's cluster-wide look on the shared real cluster.
  if (w) await cluster?.kubectl(['delete', 'deployments', '--all', '-n', w.ns, '--wait=false']);
  if (!workloadsRun.skip) await cluster?.removeNodes([node]);
  await w?.close();
  await cluster?.close();
});

/** A kubeconfig holding a fresh TokenRequest token of the rotator's ServiceAccount, its context in the test namespace: a workstation's. */
async function rotatorKubeconfig(): Promise<string> {
  const token = await issueToken(cluster, w.ns, ROTATOR, 3600);
  const yaml = await import('yaml');
  const admin = yaml.parse(await readFile(cluster.adminKubeconfig, 'utf8'));
  const path = join(w.dir, 'rotator.kubeconfig');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: admin.clusters[0].cluster }],
    users: [{ name: ROTATOR, user: { token } }],
    contexts: [{ name: 'rotator', context: { cluster: 'c', user: ROTATOR, namespace: w.ns } }],
    'current-context': 'rotator',
  };
  await writeFile(path, yaml.stringify(config), { mode: 0o600 });
  return path;
}

/** The CronJob's command from a workstation: no DD_* in the shell, no Pod files; the Datadog side is the enrollment emulator the agent's env names. */
async function runCronJobCommand() {
  const workstation = join(w.dir, 'workstation');
  await mkdir(workstation, { recursive: true });
  return runCli([...cronJobArgs(), '--rollout-timeout', '120s', '--kubeconfig', await rotatorKubeconfig()], {
    env: { ...w.env, PAR_IDENTITY_SA_ROOT: workstation, DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: undefined },
    timeoutMs: 150_000,
  });
}

/** Makes the identity in the Secret look 100 days old, so `--if-older-than 90d` rotates. */
async function ageIdentity() {
  const old = new Date(Date.now() - 100 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
  await cluster.kubectlOk(['annotate', '--overwrite', 'secret', IDENTITY, '-n', w.ns, `par-identity.datadoghq.com/rotated-at=${old}`]);
}

describe(`deploy/ on the ${CLUSTER_KIND} cluster`, () => {
  it('kubectl apply --server-side --validate=strict takes every manifest', async () => {
    const r = await cluster.kubectl(['apply', '--server-side', '--field-manager=par-identity-test', '--validate=strict', '-f', '-'], {
      stdin: docs.map((d) => JSON.stringify(d)).join('\n'),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual(
      [
        'cronjob.batch/par-identity-rotate serverside-applied',
        `role.rbac.authorization.k8s.io/${ROTATOR} serverside-applied`,
        `rolebinding.rbac.authorization.k8s.io/${ROTATOR} serverside-applied`,
        `serviceaccount/${ROTATOR} serverside-applied`,
      ].sort(),
    );
  });

  it.skipIf(workloadsRun.skip)(
    `kubectl create job --from=cronjob/par-identity-rotate makes a Job of the CronJob, owned by it ${workloadsRun.label}`,
    async () => {
      await cluster.kubectlOk(['create', 'job', 'manual-1', '--from=cronjob/par-identity-rotate', '-n', w.ns]);
      const job = (await cluster.getJson('job', 'manual-1', w.ns))!;
      expect(job.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'CronJob', name: 'par-identity-rotate' })]);
      expect(job.metadata.annotations['cronjob.kubernetes.io/instantiate']).toBe('manual');
      expect(job.spec.template.spec.serviceAccountName).toBe(ROTATOR);
      expect(job.spec.backoffLimit).toBe(0);
      // Its Pod is made by the Job controller (the image is not pulled: kwok runs it).
      await eventually(
        async () =>
          JSON.parse(await cluster.kubectlOk(['get', 'pods', '-n', w.ns, '-l', 'job-name=manual-1', '-o', 'json'])).items.length === 1,
        'the Job Pod',
      );
      await cluster.kubectl(['delete', 'job', 'manual-1', '-n', w.ns, '--cascade=foreground', '--wait=false']);
    },
  );

  it.skipIf(!agentFlagShipped || workloadsRun.skip)(
    `the CronJob’s command off-cluster with a token of its Role: skipped while young, then rotates and rolls out ${workloadsRun.label}`,
    async () => {
      const before = (await w.secretData(IDENTITY)).urn;
      const young = await runCronJobCommand();
      expect(young.code, young.stderr).toBe(0);
      expect(JSON.parse(young.stdout)).toMatchObject({ status: 'skipped' });
      await ageIdentity();
      const calls = w.enrollCalls();
      const due = await runCronJobCommand();
      expect(due.code, due.stderr).toBe(0);
      expect(w.enrollCalls()).toBe(calls + 1);
      const after = await w.secretData(IDENTITY);
      expect(after.urn).not.toBe(before);
      expect(after.previous_urn).toBe(before);
      // Rolled out in the same run: nothing left to restart (the README's promise for --rollout).
      expect(JSON.parse(due.stdout)).toMatchObject({ status: 'ok', urn: after.urn, restartHint: '' });
      // --rollout: the cluster agent's Pod template carries the new identity's fingerprint.
      const kid = decodeIdentity({ privateKey: after.private_key!, urn: after.urn! }).key.kid;
      const agent = (await cluster.getJson('deployment', AGENT, w.ns))!;
      expect(agent.spec.template.metadata.annotations['par-identity.datadoghq.com/identity-fingerprint']).toBe(kid);
    },
  );

  // Each rule's verbs, one at a time, taken out of the applied Role.
  const needed = [
    // --agent: the Deployment and the keys Secret its env names.
    ['secrets', 'get'],
    ['secrets', 'update'],
    ['configmaps', 'get'],
    ['deployments', 'get'],
    ['deployments', 'patch'],
    ['pods', 'list'],
  ] as const;
  it.skipIf(!agentFlagShipped).each(needed)(
    'without %s %s in the Role the run fails before anything is enrolled',
    async (resource, verb) => {
      const shipped = role();
      const reduced = structuredClone(shipped);
      for (const rule of reduced.rules) if (rule.resources.includes(resource)) rule.verbs = rule.verbs.filter((v: string) => v !== verb);
      reduced.rules = reduced.rules.filter((r: { verbs: string[] }) => r.verbs.length > 0);
      await cluster.kubectlOk(['replace', '-f', '-'], { stdin: JSON.stringify(reduced) });
      try {
        // RBAC changes reach the authorizer through its informer: wait until can-i says no.
        await eventually(async () => {
          const object = {
            secrets: `secrets/${IDENTITY}`,
            configmaps: 'configmaps/datadog-cluster-id',
            deployments: `deployments/${AGENT}`,
            pods: 'pods',
          }[resource];
          const run = (args: string[], stdin: string) => cluster.kubectl(args, { stdin });
          return (await canI(run, verb, object, { namespace: w.ns, as: `system:serviceaccount:${w.ns}:${ROTATOR}` })) === 'no';
        }, `RBAC without ${verb} ${resource}`);
        await ageIdentity();
        const calls = w.enrollCalls();
        const before = await w.secretData(IDENTITY);
        const r = await runCronJobCommand();
        expect(r.code, r.stderr).not.toBe(0);
        expect(r.stderr).toMatch(/KUBE_FORBIDDEN|FORBIDDEN|forbidden/);
        expect(w.enrollCalls()).toBe(calls);
        expect(await w.secretData(IDENTITY)).toEqual(before);
      } finally {
        await cluster.kubectlOk(['replace', '-f', '-'], { stdin: JSON.stringify(shipped) });
      }
    },
  );
});
