import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKeyHash, buildUrn, encodePrivateJwk, generateIdentityKey } from '../../src/identity/index.js';
import { agreeingAgent, clusterAgentDeployment, helmAgentEnv } from '../e2e/cluster-fixture.js';
import { type AgentWorld, agentWorld, SECRET } from './agent-world.js';
import { CLUSTER_KIND, startTestCluster, type TestCluster } from './test-cluster.js';

// Issue 30 on the cluster itself: the running cluster agent decides which Secret is rotated and with
// which settings (docs/configuration.md, "The running agent's settings"). Off-cluster, with no -c: the
// settings come from the agent's Deployment as stored by the apiserver — its env, the Secret holding its
// keys, and for the Operator layout the -E file mounted from a ConfigMap (subPath).

let cluster: TestCluster;
let w: AgentWorld;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.close();
});
beforeEach(async () => {
  w = await agentWorld(cluster, 'layout');
});
afterEach(async () => {
  // A cluster agent left behind would be found by another file's cluster-wide look.
  await cluster.kubectl(['delete', 'deployments', '--all', '-n', w.ns, '--wait=false']);
  await w.close();
});

/** Off-cluster (no service-account file), no -c: only the agent's settings. */
const noConfig = (args: string[], env: Record<string, string> = {}) =>
  w.run(['rotate-par-identity', '--kubeconfig', cluster.adminKubeconfig, '-n', w.ns, '--no-verify', '--json', ...args], {
    env: { PAR_IDENTITY_SA_ROOT: join(w.dir, 'no-pod'), ...env },
  });

describe(`the running cluster agent decides, on the ${CLUSTER_KIND} cluster`, () => {
  it('Helm: the Secret its env names is rotated (never the default), with its keys and cluster name', async () => {
    for (const object of agreeingAgent(w.ns, w.enrollment.url, {
      name: 'datadog-cluster-agent',
      env: [{ name: 'DD_PRIVATE_ACTION_RUNNER_IDENTITY_SECRET_NAME', value: 'custom-par-identity' }],
    })) {
      await cluster.create(object);
    }
    const run = await noConfig(['--agent', 'deployment/datadog-cluster-agent']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ secretName: 'custom-par-identity', namespace: w.ns, clusterAgent: { layout: 'helm' } });
    expect(Object.keys(await w.secretData('custom-par-identity'))).toEqual(expect.arrayContaining(['urn', 'private_key']));
    expect(await cluster.getJson('secret', SECRET, w.ns)).toBeUndefined();
    expect(run.stderr).toContain(
      `cluster name (runner name): e2e-cluster (env DD_CLUSTER_NAME of deployment ${w.ns}/datadog-cluster-agent)`,
    );
    expect(w.enrollCalls()).toBe(1);
  });

  it('a DD_SITE in the shell with another region stops before enrolling; --override-agent-settings is the way on', async () => {
    for (const object of agreeingAgent(w.ns, w.enrollment.url)) await cluster.create(object);
    const run = await noConfig([], { DD_SITE: 'datadoghq.eu' });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('error[AGENT_SETTINGS_MISMATCH]');
    expect(run.stderr).toContain('site and enrollment endpoint: here region eu1');
    expect(w.enrollCalls()).toBe(0);
    expect(await cluster.getJson('secret', SECRET, w.ns)).toBeUndefined();
  });

  it.each([
    [
      'identity Secret name (an -E file)',
      'private_action_runner:\n  identity_secret_name: elsewhere\n',
      {},
      'identity Secret name: here elsewhere',
    ],
    ['cluster name (an -E file)', 'cluster_name: another\n', {}, 'cluster name (runner name): here another'],
    [
      'API key (DD_API_KEY in the shell)',
      '{}\n',
      { DD_API_KEY: 'a-different-api-key-0000000000000' },
      `API key (api_key_hash): here api_key_hash ${apiKeyHash('a-different-api-key-0000000000000').slice(0, 12)}`,
    ],
  ])('%s with another outcome than the agent’s stops before enrolling', async (_, yaml, env, said) => {
    for (const object of agreeingAgent(w.ns, w.enrollment.url)) await cluster.create(object);
    const extra = join(w.dir, 'local.yaml');
    await writeFile(extra, yaml);
    const run = await noConfig(['-E', extra], env);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('error[AGENT_SETTINGS_MISMATCH]');
    expect(run.stderr).toContain(said);
    expect(run.stderr).not.toContain('a-different-api-key-0000000000000');
    expect(w.enrollCalls()).toBe(0);
    expect(await cluster.getJson('secret', SECRET, w.ns)).toBeUndefined();
  });

  it("Helm identityFromExistingSecret: with no Secret of the agent's own, the user's Secret is rotated, and a rollout is said to be needed", async () => {
    for (const object of agreeingAgent(w.ns, w.enrollment.url)) await cluster.create(object);
    // The user's Secret, made as an operator would have (here by a first rotation into that name).
    expect((await noConfig(['--secret-name', 'user-identity'])).code).toBe(0);
    const before = (await w.secretData('user-identity')).urn;
    await cluster.kubectl(['delete', 'deployment', 'dd-release-cluster-agent', '-n', w.ns, '--wait=false']);
    const env = helmAgentEnv(w.enrollment.url, [
      { name: 'DD_PRIVATE_ACTION_RUNNER_SELF_ENROLL', value: 'false' },
      { name: 'DD_PRIVATE_ACTION_RUNNER_URN', valueFrom: { secretKeyRef: { name: 'user-identity', key: 'urn' } } },
      { name: 'DD_PRIVATE_ACTION_RUNNER_PRIVATE_KEY', valueFrom: { secretKeyRef: { name: 'user-identity', key: 'private_key' } } },
    ]);
    await cluster.create(clusterAgentDeployment(w.ns, 'existing-secret-agent', undefined, { env }));
    const run = await noConfig([]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      secretName: 'user-identity',
      action: 'updated',
      clusterAgent: { layout: 'helm-existing-secret' },
    });
    expect((await w.secretData('user-identity')).urn).not.toBe(before);
    expect(await cluster.getJson('secret', SECRET, w.ns)).toBeUndefined();
    expect(run.stderr).toContain('only after a rollout');
  });

  it('Operator: the Secret named in the -E file mounted from its ConfigMap (subPath)', async () => {
    const parFile = '/etc/datadog-agent/privateactionrunner.yaml';
    await cluster.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'datadog-clusteragent-privateactionrunner', namespace: w.ns },
      data: {
        'privateactionrunner.yaml': 'private_action_runner:\n  enabled: true\n  self_enroll: true\n  identity_secret_name: op-identity\n',
      },
    });
    const env = helmAgentEnv(w.enrollment.url).filter((e) => !String(e.name).startsWith('DD_PRIVATE_ACTION_RUNNER_'));
    const keys = agreeingAgent(w.ns, w.enrollment.url)[1]!;
    await cluster.create(keys);
    await cluster.create(
      clusterAgentDeployment(
        w.ns,
        'datadog-cluster-agent',
        {
          'app.kubernetes.io/component': 'cluster-agent',
          'agent.datadoghq.com/component': 'cluster-agent',
          'app.kubernetes.io/managed-by': 'datadog-operator',
        },
        {
          args: ['datadog-cluster-agent', 'start', `-E=${parFile}`],
          env,
          volumeMounts: [{ name: 'privateactionrunner-config', mountPath: parFile, subPath: 'privateactionrunner.yaml', readOnly: true }],
        },
        [{ name: 'privateactionrunner-config', configMap: { name: 'datadog-clusteragent-privateactionrunner' } }],
      ),
    );
    const run = await noConfig([]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ secretName: 'op-identity', namespace: w.ns, clusterAgent: { layout: 'operator' } });
    expect(run.stderr).toContain(
      `identity Secret name: op-identity (configmap ${w.ns}/datadog-clusteragent-privateactionrunner key privateactionrunner.yaml mounted at ${parFile})`,
    );
  });

  it('standalone chart: --k8s-secret with --rollout of a workload that reads another Secret stops before enrolling; the runner that reads it passes', async () => {
    const values = {
      RUNNER_URN: buildUrn({ region: 'us1', orgId: 1234567, runnerId: 'seed-runner' }),
      RUNNER_PRIVATE_KEY: encodePrivateJwk(generateIdentityKey()),
    };
    const data = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    await cluster.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'runner-identity', namespace: w.ns },
      type: 'Opaque',
      data,
    });
    const runner = (name: string, secret: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: w.ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'runner', image: 'registry.example/par:1', envFrom: [{ secretRef: { name: secret } }] }] },
        },
      },
    });
    await cluster.create(runner('other-runner', 'another-secret'), runner('my-runner', 'runner-identity'));
    const rotate = (workload: string) =>
      w.run(
        [
          'rotate-identity',
          '-c',
          join(w.dir, 'datadog-cluster.yaml'),
          '--k8s-secret',
          'runner-identity',
          '-n',
          w.ns,
          '--kubeconfig',
          cluster.adminKubeconfig,
          '--rollout',
          workload,
          '--dry-run',
        ],
        {
          env: { PAR_IDENTITY_SA_ROOT: join(w.dir, 'no-pod') },
        },
      );
    const refused = await rotate('deployment/other-runner');
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain(
      `error[AGENT_SETTINGS_MISMATCH]: deployment/other-runner does not read Secret ${w.ns}/runner-identity: the Secrets its containers read are another-secret`,
    );
    const passed = await rotate('deployment/my-runner');
    expect(passed.stderr).not.toContain('AGENT_SETTINGS_MISMATCH');
    expect(passed.stderr).toContain(`deployment/my-runner reads Secret ${w.ns}/runner-identity`);
    expect(w.enrollCalls()).toBe(0);
  });
});
