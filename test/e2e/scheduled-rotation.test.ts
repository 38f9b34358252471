import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY, type EnrollmentEmulator, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import { type KubeEmulator, type KubeObject, type PolicyRule, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';
import { buildUrn, encodePrivateJwk, generateIdentityKey } from '../../src/identity/index.js';
import { kubectlIn, kubectlPath, kubectlRequired } from '../emulators/kubectl-runner.js';
import { spawnSync } from 'node:child_process';
import { helmClusterAgentObjects } from '../../emulators/helm-cluster-agent.js';
import { BIN, type CliRun, runCli } from './run-cli.js';
import { storedDeploymentRollouts } from './stored-deployment.js';

// deploy/rotation-cronjob.yaml for real: applied with kubectl to the emulator, then the CronJob's own
// command (its args, no env: every setting comes from the cluster agent's Helm-layout Deployment) run
// with its ServiceAccount's token. It succeeds; with any verb it needs taken out of the Role it fails
// before anything is enrolled.

/** The command reads the agent with helper "agent"'s --agent (issue 30): the suite waits for it. */
const agentFlagShipped = spawnSync(process.execPath, [BIN, 'rotate-par-identity', '--help'], { encoding: 'utf8' }).stdout.includes(
  '--agent ',
);

const NS = 'datadog';
const SA = 'par-identity-rotator';
const IDENTITY = 'datadog-private-action-runner-identity';
const MANIFEST = fileURLToPath(new URL('../../deploy/rotation-cronjob.yaml', import.meta.url));
// biome-ignore lint/suspicious/noExplicitAny: Role rules edited by the test
type Role = KubeObject & { rules: (PolicyRule & { resourceNames?: string[] })[] } & Record<string, any>;

let dir: string;
let kube: KubeEmulator;
let enrollment: EnrollmentEmulator;
let saKubeconfig: string;
let podRoot: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-cron-'));
  [kube, enrollment] = await Promise.all([startKubeEmulator(), startEnrollmentEmulator()]);
  seedNamespaces(kube, [NS]);
  const admin = join(dir, 'admin.kubeconfig');
  await kube.writeKubeconfig(admin, { token: kube.adminToken, namespace: NS });
  if (kubectlPath) {
    const applied = await kubectlIn(dir, admin)(['apply', '-f', MANIFEST]);
    expect(applied.code, applied.stderr).toBe(0);
  }
  // What the cluster agent created before: its identity Secret (old enough to be due) and its cluster id.
  const key = generateIdentityKey();
  kube.createObject({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: IDENTITY, namespace: NS, annotations: { 'par-identity.datadoghq.com/rotated-at': '2026-01-01T00:00:00Z' } },
    type: 'Opaque',
    data: {
      private_key: Buffer.from(encodePrivateJwk(key)).toString('base64'),
      urn: Buffer.from(buildUrn({ region: 'us1', orgId: 1234567, runnerId: 'old' })).toString('base64'),
    },
  } as KubeObject);
  kube.createObject({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'datadog-cluster-id', namespace: NS },
    data: { id: '11111111-2222-3333-4444-555555555555' },
  } as KubeObject);
  // The cluster agent as the Helm chart deploys it, with its keys Secret `datadog-secret`.
  for (const obj of helmClusterAgentObjects({
    namespace: NS,
    clusterName: 'my-cluster',
    apiKey: DEFAULT_API_KEY,
    appKey: DEFAULT_APP_KEY,
    ddUrl: enrollment.url,
    replicas: 1,
  }))
    kube.createObject(obj as KubeObject);
  // Its rollouts finish with stored Pods (the emulator runs no controllers; the real CronJob run, its
  // Job and Pods: test/cluster/deploy.cluster.test.ts).
  storedDeploymentRollouts(kube, NS, 'datadog-cluster-agent');
  // The ServiceAccount's token: what it may do is what the applied Role grants.
  kube.addToken('cron-token', { user: `system:serviceaccount:${NS}:${SA}`, rules: [] });
  saKubeconfig = join(dir, 'sa.kubeconfig');
  await kube.writeKubeconfig(saKubeconfig, { token: 'cron-token', namespace: NS });
  // The Pod's service-account namespace file, so the cluster id is read in the agent's namespace.
  podRoot = join(dir, 'pod');
  await mkdir(join(podRoot, 'var/run/secrets/kubernetes.io/serviceaccount'), { recursive: true });
  await writeFile(join(podRoot, 'var/run/secrets/kubernetes.io/serviceaccount/namespace'), NS);
});

afterEach(async () => {
  await Promise.all([kube.close(), enrollment.close()]);
  await rm(dir, { recursive: true, force: true });
});

/** The CronJob's args as shipped (no env: deploy/rotation-cronjob.yaml), with the test's connection and timers. */
function cronJob(): Promise<CliRun> {
  return runCli(
    [
      'rotate-par-identity',
      '--agent',
      'deployment/datadog-cluster-agent',
      '--if-older-than',
      '90d',
      '--rollout',
      'deployment/datadog-cluster-agent',
      '--json',
      '--kubeconfig',
      saKubeconfig,
    ],
    {
      env: {
        PAR_IDENTITY_SA_ROOT: podRoot,
        PAR_IDENTITY_ROLLOUT_POLL_MS: '30',
        PAR_IDENTITY_RETRY_INITIAL_MS: '20',
        HOME: dir,
        NO_COLOR: '1',
      },
      timeoutMs: 60_000,
    },
  );
}

const enrolled = () => enrollment.requests.filter((r) => r.route === 'enroll').length;

function withoutVerb(resource: string, verb: string): void {
  const role = structuredClone(kube.getObject('rbac.authorization.k8s.io/v1', 'Role', NS, SA)) as Role;
  for (const rule of role.rules) if (rule.resources?.includes(resource)) rule.verbs = rule.verbs.filter((v) => v !== verb);
  role.rules = role.rules.filter((r) => r.verbs.length > 0);
  kube.updateObject(role);
}

describe.skipIf((!kubectlPath && !kubectlRequired) || !agentFlagShipped)(
  'the scheduled rotation CronJob with its least-privilege ServiceAccount',
  () => {
    it('rotates with exactly the Role it ships with, records the audit Events, and skips when not due', async () => {
      const run = await cronJob();
      expect(run.code, run.stderr).toBe(0);
      const out = JSON.parse(run.stdout);
      expect(out).toMatchObject({ status: 'ok', secretName: IDENTITY, rollout: { action: 'rolled-out' } });
      const reasons = kube.listObjects('v1', 'Event', NS).map((e) => (e as { reason?: string }).reason);
      expect(reasons).toEqual(expect.arrayContaining(['IdentityRotated', 'RolloutStarted', 'RolloutCompleted']));
      const again = await cronJob();
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout).status).toBe('skipped');
      expect(enrolled()).toBe(1);
    });

    it.each([
      ['secrets', 'get'],
      ['secrets', 'update'],
      ['configmaps', 'get'],
      ['deployments', 'get'],
      ['deployments', 'patch'],
      ['pods', 'list'],
    ])('without %s %s it fails before anything is enrolled', async (resource, verb) => {
      withoutVerb(resource, verb);
      const run = await cronJob();
      expect(run.code, run.stderr).not.toBe(0);
      // Named as a refusal of the API server, whichever read or write it stopped.
      expect(run.stderr).toMatch(/forbidden/i);
      expect(enrolled()).toBe(0);
    });

    it('without create on Events it still rotates, with a warning (the audit trail is best effort)', async () => {
      withoutVerb('events', 'create');
      const run = await cronJob();
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/warning: .*IdentityRotated/);
    });
  },
);
