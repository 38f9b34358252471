import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_API_KEY,
  DEFAULT_APP_KEY,
  DEFAULT_FORBIDDEN_APP_KEY,
  type EnrollmentEmulator,
  startEnrollmentEmulator,
} from '../../emulators/enrollment/index.js';
import type { KubeEmulator, KubeObject } from '../../emulators/kube/index.js';
import { FINGERPRINT_ANNOTATION } from '../../src/rollout/index.js';
import { lockTries } from '../fixtures/lock-tries.js';
import { type CliRun, runCli } from './run-cli.js';
import { clusterWithRunner } from './runner-cluster.js';

// The step order every rotation goes through (issue 12): roll out only after a verification that
// passed, one cluster connection for the Secret and the rollout, and dry runs that fail for every
// reason a real run would, without enrolling anything.

const NS = 'datadog';
const SECRET = 'private-action-runner-identity';

// biome-ignore lint/suspicious/noExplicitAny: nested Kubernetes fields read by assertions only
type Obj = KubeObject & { spec?: any };

let dir: string;
let enrollment: EnrollmentEmulator;
const clusters: KubeEmulator[] = [];

/**
 * The emulated cluster with a cluster agent whose settings are this file's config (the Helm layout,
 * docs/configuration.md "The running agent's settings"): a local -c agrees with the running agent, so
 * these tests see the pipeline, not a refusal. `agentEnv` adds to (and overrides) the agent's env.
 */
async function cluster(agentEnv: Record<string, unknown>[] = [], newPodsReady = true): Promise<KubeEmulator> {
  const kube = await clusterWithRunner(
    [NS],
    NS,
    { enrollmentUrl: enrollment.url, env: [{ name: 'DD_CLUSTER_NAME', value: 'e2e' }, ...agentEnv] },
    newPodsReady,
  );
  clusters.push(kube);
  return kube;
}

const templateAnnotations = (kube: KubeEmulator) =>
  (kube.getObject('apps/v1', 'Deployment', NS, 'par') as Obj).spec.template.metadata.annotations ?? {};
const enrollRequests = () => enrollment.requests.filter((r) => r.route === 'enroll' || r.route === 'enroll_api_key_only');
const writes = (kube: KubeEmulator, resource: string) =>
  kube.requests.filter((r) => r.resource === resource && ['create', 'update', 'patch'].includes(r.verb) && r.query.dryRun !== 'All');

async function writeConfig(name: string, extra: string[] = [], ddUrl = enrollment.url): Promise<void> {
  const lines = [
    `api_key: ${DEFAULT_API_KEY}`,
    `app_key: ${DEFAULT_APP_KEY}`,
    `dd_url: ${ddUrl}`,
    'hostname: e2e-host',
    'cluster_name: e2e',
    'private_action_runner:',
    '  enabled: true',
    ...extra,
    '',
  ];
  await writeFile(join(dir, name), lines.join('\n'));
}

function run(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, {
    env: {
      DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
      PAR_IDENTITY_RETRY_INITIAL_MS: '20',
      PAR_IDENTITY_ROLLOUT_POLL_MS: '30',
      NO_COLOR: '1',
      HOME: dir,
      KUBECONFIG: undefined,
      ...env,
    },
    timeoutMs: 60_000,
  });
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-pipeline-'));
  enrollment = await startEnrollmentEmulator();
});

afterEach(async () => {
  await Promise.all([enrollment.close(), ...clusters.splice(0).map((k) => k.close())]);
  await rm(dir, { recursive: true, force: true });
});

describe('roll out only after a verification that passed', () => {
  it('rotate-identity --rollout with a rejected health check: exit 8 and no Pod restarted', async () => {
    const kube = await cluster();
    const kubeconfig = join(dir, 'kubeconfig');
    await kube.writeKubeconfig(kubeconfig, { token: kube.adminToken, namespace: NS });
    await writeConfig('datadog.yaml');
    const before = templateAnnotations(kube);
    enrollment.script('health', { status: 401, body: '{"errors":["Unauthorized"]}' });
    const result = await run(['rotate-identity', '-c', dir, '--kubeconfig', kubeconfig, '--rollout', 'deployment/par']);
    expect(result.code, result.stderr).toBe(8);
    expect(result.stderr).toContain('error[VERIFICATION_FAILED]');
    expect(result.stderr).toContain('The rollout was not started');
    expect(result.stderr).toContain('nothing was written to identity file');
    expect(templateAnnotations(kube)).toEqual(before);
    expect(writes(kube, 'deployments')).toHaveLength(0);
    // The pre-flight did check the workload before enrolling: a server-side dry run of the patch.
    expect(kube.requests.some((r) => r.resource === 'deployments' && r.verb === 'patch' && r.query.dryRun === 'All')).toBe(true);
  });

  it('rotate-identity --rollout with a passing verification restarts the Pods onto the new fingerprint', async () => {
    const kube = await cluster();
    const kubeconfig = join(dir, 'kubeconfig');
    await kube.writeKubeconfig(kubeconfig, { token: kube.adminToken, namespace: NS });
    await writeConfig('datadog.yaml');
    const result = await run(['rotate-identity', '-c', dir, '--kubeconfig', kubeconfig, '--rollout', 'deployment/par', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.rollout).toMatchObject({ action: 'rolled-out', previousRunnerSafeToRemove: true });
    expect(templateAnnotations(kube)[FINGERPRINT_ANNOTATION]).toBe(out.fingerprint);
    // Nothing is left to restart: no restart hint, and no next: line in text.
    expect(out.restartHint).toBe('');
    const human = await run(['rotate-identity', '-c', dir, '--kubeconfig', kubeconfig, '--rollout', 'deployment/par']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).not.toMatch(/^next:/m);
    expect(human.stdout).toMatch(/^undo: par-identity rollback /m);
  });
});

describe("--timeout ends where the rollout begins; --rollout-timeout is the rollout's", () => {
  it('a rollout that outlasts --timeout is not cut by it: it runs to --rollout-timeout, then its restart is undone and the strategy restored', async () => {
    const kube = await cluster([], false);
    const kubeconfig = join(dir, 'kubeconfig');
    await kube.writeKubeconfig(kubeconfig, { token: kube.adminToken, namespace: NS });
    await writeConfig('datadog.yaml');
    const strategy = (kube.getObject('apps/v1', 'Deployment', NS, 'par') as Obj).spec.strategy;
    // The rollout waits for Pods that never become Ready: it outlasts --timeout (5 s) whatever the machine's speed.
    const args = ['rotate-identity', '-c', dir, '--kubeconfig', kubeconfig, '--rollout', 'deployment/par', '--json'];
    const result = await run([...args, '--timeout', '5s', '--rollout-timeout', '7s']);
    expect(result.code, result.stderr).toBe(10);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({ code: 'ROLLOUT_TIMEOUT' });
    expect(out.message).toContain('did not finish rolling out within 7 s');
    const after = kube.getObject('apps/v1', 'Deployment', NS, 'par') as Obj;
    expect(after.spec.strategy).toEqual(strategy);
    expect(after.spec.template.metadata.annotations?.[FINGERPRINT_ANNOTATION]).toBeUndefined();
    expect(Object.keys(after.metadata.annotations ?? {}).filter((k) => k.startsWith('par-identity'))).toEqual([]);
  });
});

describe('one cluster connection per run, resolved like kubectl', () => {
  async function threeClusters() {
    const [fromConfig, fromHome, fromEnv] = [await cluster(), await cluster(), await cluster()];
    const configPath = join(dir, 'agent.kubeconfig');
    await fromConfig.writeKubeconfig(configPath, { token: fromConfig.adminToken, namespace: NS });
    await mkdir(join(dir, '.kube'));
    await fromHome.writeKubeconfig(join(dir, '.kube', 'config'), { token: fromHome.adminToken, namespace: NS });
    const envPath = join(dir, 'env.kubeconfig');
    await fromEnv.writeKubeconfig(envPath, { token: fromEnv.adminToken, namespace: NS });
    await writeConfig('datadog-cluster.yaml', [`kubernetes_kubeconfig_path: ${configPath}`, `kube_resources_namespace: ${NS}`]);
    return { fromConfig, fromHome, fromEnv, envPath };
  }

  const rotated = (kube: KubeEmulator) => kube.getObject('v1', 'Secret', NS, SECRET) !== undefined;

  it('kubernetes_kubeconfig_path beats ~/.kube/config: the Secret and the rollout both happen there', async () => {
    const { fromConfig, fromHome, fromEnv } = await threeClusters();
    const result = await run(['rotate-par-identity', '-c', dir, '--rollout', 'deployment/par', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('(kubernetes_kubeconfig_path');
    expect(rotated(fromConfig)).toBe(true);
    expect(templateAnnotations(fromConfig)[FINGERPRINT_ANNOTATION]).toBe(JSON.parse(result.stdout).fingerprint);
    for (const other of [fromHome, fromEnv]) {
      expect(rotated(other)).toBe(false);
      expect(writes(other, 'deployments')).toHaveLength(0);
    }
  });

  it('KUBECONFIG beats kubernetes_kubeconfig_path: the Secret and the rollout both happen there', async () => {
    const { fromConfig, fromHome, fromEnv, envPath } = await threeClusters();
    const result = await run(['rotate-par-identity', '-c', dir, '--rollout', 'deployment/par', '--json'], { KUBECONFIG: envPath });
    expect(result.code, result.stderr).toBe(0);
    expect(rotated(fromEnv)).toBe(true);
    expect(templateAnnotations(fromEnv)[FINGERPRINT_ANNOTATION]).toBe(JSON.parse(result.stdout).fingerprint);
    for (const other of [fromHome, fromConfig]) {
      expect(rotated(other)).toBe(false);
      expect(writes(other, 'deployments')).toHaveLength(0);
    }
  });

  it('the undo and next commands carry every flag that selected the target', async () => {
    const kube = await cluster([{ name: 'DD_PRIVATE_ACTION_RUNNER_IDENTITY_SECRET_NAME', value: 'custom-name' }]);
    const kubeconfig = join(dir, 'my kube config');
    await kube.writeKubeconfig(kubeconfig, { token: kube.adminToken, namespace: NS, contextName: 'ctx-a' });
    await writeConfig('datadog-cluster.yaml');
    const extra = join(dir, 'extra.yaml');
    await writeFile(extra, 'private_action_runner:\n  identity_secret_name: custom-name\n');
    const rotate = [
      'rotate-par-identity',
      '-c',
      dir,
      '-E',
      extra,
      '--kubeconfig',
      kubeconfig,
      '--context',
      'ctx-a',
      '-n',
      NS,
      '--no-verify',
    ];
    const first = await run(rotate);
    expect(first.code, first.stderr).toBe(0);
    // It created the Secret: nothing to roll back to, the undo deletes it (docs/protocol.md §6c).
    expect(first.stdout).toContain(`undo: kubectl -n ${NS} --kubeconfig '${kubeconfig}' --context ctx-a delete secret custom-name`);
    const result = await run(rotate);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `undo: par-identity rollback --secret -c ${dir} -E ${extra} -n ${NS} --secret-name custom-name --kubeconfig '${kubeconfig}' --context ctx-a`,
    );
    // The restart names the cluster agent's Deployment found by its Helm label.
    // Whatever its image says, the agent versions known read at start or are unknown: the restart is given (docs/protocol.md §6d).
    expect(result.stdout).toContain(`create-before-delete`);
    expect(result.stdout).toContain(
      `: par-identity rollout deployment/dd-release-cluster-agent -n ${NS} --kubeconfig '${kubeconfig}' --context ctx-a; replicas running \`par-identity watch\` reload it within seconds`,
    );
    // No kubectl command to run (the agent's own advice, cited in the next: line, is named, not given).
    expect(result.stdout).not.toMatch(/(undo|next): kubectl|: kubectl rollout/);
    // The printed undo command, run as printed, acts on the same Secret: the first run's identity is back.
    const undo = result.stdout
      .split('\n')
      .find((l) => l.startsWith('undo: '))!
      .slice('undo: par-identity '.length);
    const words = [...undo.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    const back = await run([...words, '--no-verify']);
    expect(back.code, back.stderr).toBe(0);
    const firstUrn = /rotated: (\S+)/.exec(first.stdout)![1]!;
    expect(Buffer.from((kube.getObject('v1', 'Secret', NS, 'custom-name')!.data as Record<string, string>).urn!, 'base64').toString()).toBe(
      firstUrn,
    );
  });
});

describe('--dry-run fails for every reason a real run would, and enrolls nothing', () => {
  async function expectRefused(result: CliRun, code: number, errorCode: string) {
    expect(result.code, result.stderr).toBe(code);
    expect(result.stderr).toContain(`error[${errorCode}]`);
    expect(result.stderr).toContain('[dry run] resolve config and target');
    expect(enrollRequests()).toHaveLength(0);
  }

  it('prints the step plan when every check passes', async () => {
    await writeConfig('datadog.yaml');
    const result = await run(['rotate-identity', '-c', dir, '--dry-run', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.plan.map((p: { step: string }) => p.step)).toEqual([
      'resolve',
      'lock',
      'read',
      'preflight',
      'generate',
      'enroll',
      'verify',
      'write',
      'read-back',
      'connections',
      'rollout',
    ]);
    expect(result.stderr).toMatch(
      / 6\. enroll +API key accepted by \/api\/v1\/validate, application key accepted by \/api\/v2\/validate_keys; not proven: whether the application key may enroll runners.*; would POST/,
    );
    expect(out.credentials).toEqual({
      apiKey: 'accepted',
      appKey: 'accepted',
      unproven: [expect.stringContaining('whether the application key may enroll runners')],
    });
    expect(enrollRequests()).toHaveLength(0);
    expect(enrollment.requests.map((r) => r.route)).toEqual(['validate', 'validate_keys']);
  });

  it('a rejected application key → exit 4 APP_KEY_INVALID (it passed before: the real run then failed at the enrollment), text and --json', async () => {
    await writeConfig('datadog.yaml');
    const badAppKey = 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
    const result = await run(['rotate-identity', '-c', dir, '--dry-run'], { DD_APP_KEY: badAppKey });
    await expectRefused(result, 4, 'APP_KEY_INVALID');
    expect(result.stderr).toContain('the API key itself was accepted');
    expect(result.stderr).not.toContain(badAppKey);
    const asJson = await run(['rotate-identity', '-c', dir, '--dry-run', '--json'], { DD_APP_KEY: badAppKey });
    expect(asJson.code).toBe(4);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ status: 'error', code: 'APP_KEY_INVALID', exitCode: 4 });
    expect(asJson.stdout).not.toContain(badAppKey);
    const keyChecks = enrollment.requests.filter((r) => r.route === 'validate_keys');
    expect(keyChecks.map((r) => r.status)).toEqual([403, 403]);
    expect(keyChecks[0]!.headers['dd-application-key']).toBe(badAppKey);
    // The real run with the same key is refused by Datadog: the dry run now says what the run would meet.
    const real = await run(['rotate-identity', '-c', dir], { DD_APP_KEY: badAppKey });
    expect(real.code).toBe(4);
    expect(real.stderr).toContain('error[CREDENTIALS_REJECTED]');
  });

  it('an application key without the enrollment scope passes the key check and is named as unproven', async () => {
    await writeConfig('datadog.yaml');
    const result = await run(['rotate-identity', '-c', dir, '--dry-run'], { DD_APP_KEY: DEFAULT_FORBIDDEN_APP_KEY });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'proven:       API key accepted by /api/v1/validate, application key accepted by /api/v2/validate_keys',
    );
    expect(result.stdout).toContain(
      "not proven:   whether the application key may enroll runners (its scopes and its owner's permissions): only the enrollment checks that",
    );
  });

  it('API-key-only enrollment sends no application key and says so', async () => {
    await writeConfig('datadog.yaml');
    const result = await run(['rotate-identity', '-c', dir, '--dry-run', '--json'], {
      DD_PRIVATE_ACTION_RUNNER_API_KEY_ONLY_ENROLLMENT: 'true',
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).credentials).toEqual({ apiKey: 'accepted', appKey: null, unproven: [] });
    expect(enrollment.requests.map((r) => r.route)).toEqual(['validate']);
  });

  it('a rejected API key → exit 4 API_KEY_INVALID', async () => {
    await writeConfig('datadog.yaml');
    const result = await run(['rotate-identity', '-c', dir, '--dry-run'], { DD_API_KEY: 'ffffffffffffffffffffffffffffffff' });
    await expectRefused(result, 4, 'API_KEY_INVALID');
    expect(result.stderr).not.toContain('ffffffffffffffffffffffffffffffff');
  });

  it('an unreachable enrollment host → exit 5 API_UNREACHABLE', async () => {
    await writeConfig('datadog.yaml', [], 'http://127.0.0.1:9');
    await expectRefused(await run(['rotate-identity', '-c', dir, '--dry-run']), 5, 'API_UNREACHABLE');
  });

  it('a TLS failure at the enrollment host → exit 5 TLS_UNTRUSTED', async () => {
    // The Kubernetes emulator serves HTTPS with a CA this process does not trust.
    const kube = await cluster();
    await writeConfig('datadog.yaml', [], kube.url);
    const result = await run(['rotate-identity', '-c', dir, '--dry-run']);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toContain('error[TLS_UNTRUSTED]');
    expect(result.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(enrollRequests()).toHaveLength(0);
  });

  it('a directory where no file can be created → exit 7 DIRECTORY_NOT_WRITABLE', async () => {
    await writeConfig('datadog.yaml');
    await expectRefused(
      await run(['rotate-identity', '-c', dir, '--identity-file', '/proc/par-identity-test.json', '--dry-run']),
      7,
      'DIRECTORY_NOT_WRITABLE',
    );
    expect(enrollment.requests).toHaveLength(0);
  });

  it('a Secret write the token may not make → exit 9 KUBE_FORBIDDEN', async () => {
    const kube = await cluster();
    const token = 'read-only';
    kube.addToken(token, {
      user: `system:serviceaccount:${NS}:ro`,
      namespace: NS,
      rules: [
        { apiGroups: [''], resources: ['secrets', 'configmaps', 'namespaces'], verbs: ['get'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] },
      ],
    });
    const kubeconfig = join(dir, 'ro.kubeconfig');
    await kube.writeKubeconfig(kubeconfig, { token, namespace: NS });
    kube.createObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'datadog-cluster-id', namespace: NS },
      data: { id: '00000000-0000-0000-0000-000000000001' },
    } as KubeObject);
    await writeConfig('datadog-cluster.yaml');
    await expectRefused(
      await run(['rotate-par-identity', '-c', dir, '--kubeconfig', kubeconfig, '-n', NS, '--dry-run']),
      9,
      'KUBE_FORBIDDEN',
    );
  });

  it('a --rollout workload that does not exist → exit 10 WORKLOAD_MISSING', async () => {
    const kube = await cluster();
    const kubeconfig = join(dir, 'kubeconfig');
    await kube.writeKubeconfig(kubeconfig, { token: kube.adminToken, namespace: NS });
    await writeConfig('datadog-cluster.yaml');
    await expectRefused(
      await run(['rotate-par-identity', '-c', dir, '--kubeconfig', kubeconfig, '-n', NS, '--rollout', 'deployment/nope', '--dry-run']),
      10,
      'WORKLOAD_MISSING',
    );
    expect(kube.getObject('v1', 'Secret', NS, SECRET)).toBeUndefined();
  });

  it('a --rollout workload the token may not patch → exit 9 KUBE_FORBIDDEN, before enrolling (real run too)', async () => {
    const kube = await cluster();
    const token = 'no-patch';
    kube.addToken(token, {
      user: `system:serviceaccount:${NS}:np`,
      namespace: NS,
      rules: [
        { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['*'] },
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
      ],
    });
    const kubeconfig = join(dir, 'np.kubeconfig');
    await kube.writeKubeconfig(kubeconfig, { token, namespace: NS });
    await writeConfig('datadog-cluster.yaml');
    const result = await run(['rotate-par-identity', '-c', dir, '--kubeconfig', kubeconfig, '-n', NS, '--rollout', 'deployment/par']);
    expect(result.code, result.stderr).toBe(9);
    expect(result.stderr).toContain('error[KUBE_FORBIDDEN]');
    expect(enrollRequests()).toHaveLength(0);
    expect(kube.getObject('v1', 'Secret', NS, SECRET)).toBeUndefined();
  });
});

describe('one writer at a time on the identity file', () => {
  it('a held lock → exit 11 LOCKED naming the holder, nothing enrolled; --wait-lock waits for its release', async () => {
    await writeConfig('datadog.yaml');
    const { acquireIdentityLock } = await import('../../src/storage/index.js');
    const identityFile = join(dir, 'privateactionrunner_private_identity.json');
    const held = await acquireIdentityLock(identityFile);
    const refused = await run(['rotate-identity', '-c', dir]);
    expect(refused.code, refused.stderr).toBe(11);
    expect(refused.stderr).toContain('error[LOCKED]');
    expect(refused.stderr).toContain(`pid ${process.pid}`);
    expect(enrollRequests()).toHaveLength(0);
    const rollback = await run(['rollback', '-c', dir]);
    expect(rollback.code, rollback.stderr).toBe(11);
    // The lock is released only once the waiting run has tried to take it twice: its first try failed
    // and it tried again, which only --wait-lock makes it do (test/fixtures/lock-tries.ts). A run that
    // ignored --wait-lock exits 11 after its first try, and this test then fails on its exit code.
    const tries = lockTries(dir, 'privateactionrunner_private_identity.json.lock');
    const waiting = run(['rotate-identity', '-c', dir, '--wait-lock', '20s', '--no-verify']);
    const first = await Promise.race([tries.seen(2).then(() => 'retried' as const), waiting]);
    tries.close();
    await held.release();
    const done = first === 'retried' ? await waiting : first;
    expect(first === 'retried' ? 'retried' : `exited ${done.code} before a second try: ${done.stderr}`).toBe('retried');
    expect(done.code, done.stderr).toBe(0);
    expect(enrollRequests()).toHaveLength(1);
  });
});
