import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildUrn, decodeIdentity, encodePrivateJwk, generateIdentityKey } from '../../src/identity/index.js';
import { type ClusterFixture, clusterFixture, NS } from './cluster-fixture.js';
import { expectNoSecrets } from './local-fixture.js';

// rotate-identity --k8s-secret: the Helm chart's standalone runner Secret (docs/protocol.md §6b).

const NAME = 'par-runner-identity';
let fx: ClusterFixture;

function seedRunnerSecret(extra: Record<string, string> = {}) {
  const key = generateIdentityKey();
  const values = {
    RUNNER_URN: buildUrn({ region: 'us1', orgId: 1234567, runnerId: 'seed-runner' }),
    RUNNER_PRIVATE_KEY: encodePrivateJwk(key),
    ...extra,
  };
  fx.kube.createObject({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: NAME, namespace: NS },
    type: 'Opaque',
    data: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  });
  return values;
}

beforeEach(async () => {
  fx = await clusterFixture();
});

/** The fixture's datadog-cluster.yaml given as the file, so keys and dd_url come from it. */
const rotate = (...args: string[]) => fx.run(['rotate-identity', '-c', `${fx.dir}/datadog-cluster.yaml`, '--k8s-secret', ...args]);
afterEach(async () => {
  await fx.close();
});

describe('rotate-identity --k8s-secret', () => {
  it('rotates RUNNER_URN / RUNNER_PRIVATE_KEY, keeps PREVIOUS_* and unrelated keys', async () => {
    const seed = seedRunnerSecret({ OTHER_SETTING: 'keep-me' });
    const run = await rotate(NAME, '-n', NS, '--kubeconfig', fx.adminKubeconfig, '--json');
    expect(run.code, run.stderr).toBe(0);
    const data = fx.secretData(NAME);
    expect(data.PREVIOUS_RUNNER_URN).toBe(seed.RUNNER_URN);
    expect(data.PREVIOUS_RUNNER_PRIVATE_KEY).toBe(seed.RUNNER_PRIVATE_KEY);
    expect(data.OTHER_SETTING).toBe('keep-me');
    const identity = decodeIdentity({ privateKey: data.RUNNER_PRIVATE_KEY!, urn: data.RUNNER_URN! });
    expect(JSON.parse(run.stdout)).toMatchObject({
      status: 'ok',
      urn: data.RUNNER_URN,
      fingerprint: identity.key.kid,
      previousUrn: seed.RUNNER_URN,
      verify: { ok: true },
    });
    expect(fx.secret(NAME)!.metadata.labels ?? {}).toEqual({});
    expectNoSecrets(run, [data.RUNNER_PRIVATE_KEY!, seed.RUNNER_PRIVATE_KEY, fx.enrollment.options.apiKeys[0]!]);
    // The restart to run next is our create-before-delete rollout, never a bare `kubectl rollout restart`
    // nor "add --rollout" (a second rotation): the Deployment's name is the Helm release's.
    const rollout = `par-identity rollout deployment/NAME -n ${NS} --kubeconfig ${fx.adminKubeconfig}`;
    expect(JSON.parse(run.stdout).restartHint).toBe(rollout);
    const human = await rotate(NAME, '-n', NS, '--kubeconfig', fx.adminKubeconfig);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(
      `next: the chart reads this Secret as environment variables: restart the runner's Deployment create-before-delete so its Pods load the new identity: ${rollout} (next time, --rollout deployment/NAME does it in the same run)`,
    );
    expect(human.stdout).not.toContain('kubectl rollout restart');
  });

  it('a missing Secret is refused before enrolling', async () => {
    const run = await rotate('nope', '-n', NS, '--kubeconfig', fx.adminKubeconfig);
    expect(run.code).toBe(9);
    expect(run.stderr).toContain('error[SECRET_MISSING]');
    expect(fx.enrollment.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
  });

  it('a Role without update is refused by the server-side dry run, before enrolling', async () => {
    seedRunnerSecret();
    const readOnly = await fx.kubeconfigFor('ro', [{ apiGroups: [''], resources: ['secrets'], resourceNames: [NAME], verbs: ['get'] }]);
    const run = await rotate(NAME, '-n', NS, '--kubeconfig', readOnly);
    expect(run.code).toBe(9);
    expect(run.stderr).toContain('error[KUBE_FORBIDDEN]');
    expect(fx.enrollment.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
  });

  it('a concurrent change between read and write → conflict, nothing overwritten', async () => {
    seedRunnerSecret();
    let updates = 0;
    // Between the pending key's update and the identity's (docs/identity-lifecycle.md §3).
    fx.kube.faults.beforeNext(
      { verb: 'update', resource: 'secrets', predicate: (r) => r.query.dryRun !== 'All' && ++updates === 2 },
      () => {
        const s = fx.secret(NAME)!;
        s.data = {
          ...(s.data as Record<string, string>),
          RUNNER_URN: Buffer.from('urn:dd:apps:on-prem-runner:us1:1:other').toString('base64'),
        };
        fx.kube.updateObject(s);
      },
    );
    const run = await rotate(NAME, '-n', NS, '--kubeconfig', fx.adminKubeconfig);
    expect(run.code, run.stderr).toBe(6);
    expect(fx.secretData(NAME).RUNNER_URN).toBe('urn:dd:apps:on-prem-runner:us1:1:other');
  });
});

describe('status and rollback --k8s-secret (the same target adapter)', () => {
  it('status shows both identities; rollback swaps them under the resourceVersion guard; the replaced identity becomes PREVIOUS_RUNNER_*', async () => {
    const seed = seedRunnerSecret({ OTHER_SETTING: 'keep-me' });
    const rotated = await rotate(NAME, '-n', NS, '--kubeconfig', fx.adminKubeconfig, '--json');
    expect(rotated.code, rotated.stderr).toBe(0);
    const newUrn = JSON.parse(rotated.stdout).urn as string;
    const cfg = ['-c', `${fx.dir}/datadog-cluster.yaml`, '--k8s-secret', NAME, '-n', NS, '--kubeconfig', fx.adminKubeconfig];

    const status = await fx.run(['status', ...cfg, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      target: 'helm-secret',
      urn: newUrn,
      previous: { urn: seed.RUNNER_URN },
      namespace: NS,
      secretName: NAME,
    });

    // The seeded runner was never enrolled with the emulator, so it cannot pass the health check.
    const back = await fx.run(['rollback', ...cfg, '--no-verify', '--json']);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ urn: seed.RUNNER_URN, replacedUrn: newUrn });
    const data = fx.secretData(NAME);
    expect(data.RUNNER_URN).toBe(seed.RUNNER_URN);
    expect(data.RUNNER_PRIVATE_KEY).toBe(seed.RUNNER_PRIVATE_KEY);
    expect(data.PREVIOUS_RUNNER_URN).toBe(newUrn);
    expect(data.OTHER_SETTING).toBe('keep-me');
    expect(fx.kube.requests.some((r) => r.resource === 'secrets' && r.verb === 'update' && r.query.dryRun !== 'All')).toBe(true);
    expectNoSecrets(back, [seed.RUNNER_PRIVATE_KEY, data.PREVIOUS_RUNNER_PRIVATE_KEY!]);
  });

  it('rollback --dry-run runs the server-side dry run of the swap and changes nothing; a Role without update fails it (exit 9)', async () => {
    const seed = seedRunnerSecret();
    const rotated = await rotate(NAME, '-n', NS, '--kubeconfig', fx.adminKubeconfig, '--no-verify', '--json');
    expect(rotated.code, rotated.stderr).toBe(0);
    const newUrn = JSON.parse(rotated.stdout).urn as string;
    const before = fx.secret(NAME)!.metadata.resourceVersion;
    const cfg = ['-c', `${fx.dir}/datadog-cluster.yaml`, '--k8s-secret', NAME, '-n', NS];
    const dryRunUpdates = () =>
      fx.kube.requests.filter((r) => r.resource === 'secrets' && r.verb === 'update' && r.query.dryRun === 'All').length;
    const updatesBefore = dryRunUpdates();
    const plan = await fx.run(['rollback', ...cfg, '--kubeconfig', fx.adminKubeconfig, '--dry-run', '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({
      dryRun: true,
      urn: seed.RUNNER_URN,
      replacedUrn: newUrn,
      namespace: NS,
      secretName: NAME,
    });
    expect(dryRunUpdates()).toBe(updatesBefore + 1);
    expect(fx.secret(NAME)!.metadata.resourceVersion).toBe(before);

    const readOnly = await fx.kubeconfigFor('ro-rollback', [
      { apiGroups: [''], resources: ['secrets'], resourceNames: [NAME], verbs: ['get'] },
    ]);
    const refused = await fx.run(['rollback', ...cfg, '--kubeconfig', readOnly, '--dry-run']);
    expect(refused.code, refused.stderr).toBe(9);
    expect(refused.stderr).toContain('error[KUBE_FORBIDDEN]');
    expect(fx.secret(NAME)!.metadata.resourceVersion).toBe(before);
  });

  it('rollback without PREVIOUS_RUNNER_* refuses and changes nothing (exit 7 NO_BACKUP)', async () => {
    seedRunnerSecret();
    const before = fx.secret(NAME)!.metadata.resourceVersion;
    const run = await fx.run([
      'rollback',
      '-c',
      `${fx.dir}/datadog-cluster.yaml`,
      '--k8s-secret',
      NAME,
      '-n',
      NS,
      '--kubeconfig',
      fx.adminKubeconfig,
    ]);
    expect(run.code).toBe(7);
    expect(run.stderr).toContain('error[NO_BACKUP]');
    expect(fx.secret(NAME)!.metadata.resourceVersion).toBe(before);
  });

  // The chart's values before a first enrollment: strings that are no identity (docs/identity-lifecycle.md §2).
  it.each([
    ['in RUNNER_*', { RUNNER_URN: 'URN_FROM_CONFIG', RUNNER_PRIVATE_KEY: 'PRIVATE_KEY_FROM_CONFIG' }],
    [
      'in RUNNER_* and PREVIOUS_RUNNER_*',
      {
        RUNNER_URN: 'URN_FROM_CONFIG',
        RUNNER_PRIVATE_KEY: 'PRIVATE_KEY_FROM_CONFIG',
        PREVIOUS_RUNNER_URN: 'URN_FROM_CONFIG',
        PREVIOUS_RUNNER_PRIVATE_KEY: 'PRIVATE_KEY_FROM_CONFIG',
      },
    ],
  ])('a placeholder %s never becomes the previous identity: rollback then refuses (NO_BACKUP)', async (_, placeholder) => {
    seedRunnerSecret(placeholder);
    const run = await rotate(NAME, '-n', NS, '--kubeconfig', fx.adminKubeconfig);
    expect(run.code, run.stderr).toBe(0);
    const data = fx.secretData(NAME, NS);
    decodeIdentity({ privateKey: data.RUNNER_PRIVATE_KEY!, urn: data.RUNNER_URN! });
    expect(data.PREVIOUS_RUNNER_URN).toBeUndefined();
    expect(data.PREVIOUS_RUNNER_PRIVATE_KEY).toBeUndefined();
    const back = await fx.run([
      'rollback',
      '-c',
      `${fx.dir}/datadog-cluster.yaml`,
      '--k8s-secret',
      NAME,
      '-n',
      NS,
      '--kubeconfig',
      fx.adminKubeconfig,
    ]);
    expect(back.code, back.stderr).toBe(7);
    expect(back.stderr).toContain('error[NO_BACKUP]');
  });
});

// The runner decides which Secret is its identity: the workload --rollout names must read the Secret
// rotated (issue 30, docs/protocol.md §6b), else the run stops before enrolling.
describe('rotate-identity --k8s-secret --rollout: the named workload must read that Secret', () => {
  const runnerReading = (name: string, secret: string) =>
    fx.kube.createObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'runner', image: 'par:1', envFrom: [{ secretRef: { name: secret } }] }] },
        },
      },
    } as never);

  it('a workload reading another Secret: AGENT_SETTINGS_MISMATCH before enrolling; --override-agent-settings goes on and says so', async () => {
    seedRunnerSecret();
    runnerReading('other-runner', 'another-secret');
    const refused = await rotate(
      NAME,
      '-n',
      NS,
      '--kubeconfig',
      fx.adminKubeconfig,
      '--rollout',
      'deployment/other-runner',
      '--dry-run',
      '--json',
    );
    expect(refused.code, refused.stderr).toBe(3);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      code: 'AGENT_SETTINGS_MISMATCH',
      message: `deployment/other-runner does not read Secret ${NS}/${NAME}: the Secrets its containers read are another-secret`,
    });
    expect(fx.enrollment.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
    const forced = await rotate(
      NAME,
      '-n',
      NS,
      '--kubeconfig',
      fx.adminKubeconfig,
      '--rollout',
      'deployment/other-runner',
      '--dry-run',
      '--override-agent-settings',
    );
    expect(forced.stderr).not.toContain('error[AGENT_SETTINGS_MISMATCH]');
    expect(forced.stderr).toContain('rotating it anyway (--override-agent-settings)');
  });

  it('the workload that reads it passes the check', async () => {
    seedRunnerSecret();
    runnerReading('my-runner', NAME);
    const run = await rotate(NAME, '-n', NS, '--kubeconfig', fx.adminKubeconfig, '--rollout', 'deployment/my-runner', '--dry-run');
    expect(run.stderr).not.toContain('error[AGENT_SETTINGS_MISMATCH]');
    expect(run.stderr).toContain(`deployment/my-runner reads Secret ${NS}/${NAME}`);
  });
});
