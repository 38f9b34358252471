import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY } from '../../emulators/enrollment/index.js';
import { apiKeyHash } from '../../src/identity/index.js';
import {
  AGENT,
  type ClusterFixture,
  clusterAgentDeployment,
  clusterFixture,
  helmAgentEnv,
  KEYS_SECRET,
  NS,
  SECRET,
} from './cluster-fixture.js';
import { expectNoSecrets } from './local-fixture.js';

// The running cluster agent decides (issue 30; docs/configuration.md, "The running agent's settings"):
// the built binary on the Kubernetes emulator, for each layout the installers make, each mismatch
// between the local settings and the agent's, --override-agent-settings, what RBAC hides, and no agent.

let fx: ClusterFixture;
beforeEach(async () => {
  fx = await clusterFixture();
});
afterEach(async () => {
  await fx.close();
});

const enrollCalls = () => fx.enrollment.requests.filter((r) => r.route === 'enroll');
const json = (stdout: string) => JSON.parse(stdout.trim()) as Record<string, unknown>;

/** The fixture's agent Deployment replaced by one with this container and volumes. */
function replaceAgent(container: Record<string, unknown>, volumes: unknown[] = [], labels?: Record<string, string>): void {
  fx.kube.deleteObject('apps/v1', 'Deployment', NS, AGENT);
  fx.kube.createObject(clusterAgentDeployment(NS, AGENT, labels, container, volumes));
}

/** rotate-par-identity with no local config: the agent's settings only. */
const rotateNoConfig = (extra: string[] = [], env: Record<string, string> = {}) =>
  fx.run(['rotate-par-identity', '--kubeconfig', fx.adminKubeconfig, '--no-verify', ...extra], { env });

function runnerName(): string {
  const body = JSON.parse(enrollCalls().at(-1)!.body) as { data: { attributes: { runner_name: string } } };
  return body.data.attributes.runner_name;
}

describe('Helm layout (self-enroll Secret named by env)', () => {
  it("issue 30 point 1: -c with no identity_secret_name rotates the agent's custom-par-identity, never creates the default", async () => {
    replaceAgent({
      env: helmAgentEnv(fx.enrollment.url, [{ name: 'DD_PRIVATE_ACTION_RUNNER_IDENTITY_SECRET_NAME', value: 'custom-par-identity' }]),
    });
    // The agent's Secret exists (enrolled by the agent: here by a first run naming it).
    expect((await fx.rotate(['--no-verify', '--secret-name', 'custom-par-identity'])).code).toBe(0);
    const before = fx.secretData('custom-par-identity').urn;
    const run = await fx.rotate(['--no-verify', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ secretName: 'custom-par-identity', namespace: NS, action: 'updated' });
    expect(fx.secretData('custom-par-identity').previous_urn).toBe(before);
    expect(fx.secret(SECRET)).toBeUndefined();
    expect(run.stderr).toContain(
      `identity Secret name: custom-par-identity (env DD_PRIVATE_ACTION_RUNNER_IDENTITY_SECRET_NAME of deployment ${NS}/${AGENT})`,
    );
  });

  it("no local config: the agent's settings, keys from its Secret, never printed; status shows them with their sources and the layout", async () => {
    const run = await rotateNoConfig(['--agent', `deployment/${AGENT}`, '-n', NS, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const out = json(run.stdout) as {
      clusterAgent: {
        deployment: string;
        layout: string;
        version: string;
        settings: { setting: string; agentSource: string; outcome: string }[];
      };
    };
    expect(out).toMatchObject({
      secretName: SECRET,
      namespace: NS,
      action: 'created',
      agentVersion: { version: '7.81.0', source: 'cluster agent image' },
    });
    expect(out.clusterAgent).toMatchObject({ deployment: `${NS}/${AGENT}`, layout: 'helm', version: '7.81.0' });
    expect(out.clusterAgent.settings.find((s) => s.setting === 'API key (api_key_hash)')).toMatchObject({
      agentSource: `secret ${NS}/${KEYS_SECRET} key api-key (env DD_API_KEY of deployment ${NS}/${AGENT})`,
      outcome: 'agent',
    });
    expect(fx.secretData().api_key_hash).toBe(apiKeyHash(DEFAULT_API_KEY));
    expect(runnerName()).toMatch(/^e2e-cluster-\d{14}$/);
    expect(run.stderr).toContain('no -c given, so /etc/datadog-agent is not read');
    expectNoSecrets(run, [DEFAULT_API_KEY, fx.enrollment.options.appKeys[0]!]);
    // Found by its labels too, without --agent.
    const status = await fx.run(['status', '--secret', '--kubeconfig', fx.adminKubeconfig]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toContain(`cluster agent: deployment ${NS}/${AGENT} (found by its labels`);
    expect(status.stderr).toContain('layout helm, version 7.81.0');
    expect(status.stderr).toContain(`cluster name (runner name): e2e-cluster (env DD_CLUSTER_NAME of deployment ${NS}/${AGENT})`);
    const rollback = await fx.run(['rollback', '--secret', '--kubeconfig', fx.adminKubeconfig, '--no-verify', '--dry-run']);
    // Nothing to roll back to after a creation: the Secret the agent's settings name was found all the same.
    expect(rollback.stderr).toContain(`secret: ${NS}/${SECRET}`);
    expect(rollback.stderr).toContain(`cluster agent: deployment ${NS}/${AGENT}`);
  });
});

describe('a local setting with another outcome stops before anything is enrolled', () => {
  it.each([
    ['identity Secret name', 'private_action_runner:\n  identity_secret_name: elsewhere\n', {}, 'identity Secret name: here elsewhere'],
    ['cluster name', 'cluster_name: another\n', {}, 'cluster name (runner name): here another'],
    ['site (DD_SITE in the shell)', '', { DD_SITE: 'datadoghq.eu' }, 'site and enrollment endpoint: here region eu1'],
    [
      'API key (DD_API_KEY in the shell)',
      '',
      { DD_API_KEY: 'a-different-api-key-0000000000000' },
      `API key (api_key_hash): here api_key_hash ${apiKeyHash('a-different-api-key-0000000000000').slice(0, 12)}`,
    ],
  ])('%s', async (_, extraYaml, env, said) => {
    const extra = join(fx.dir, 'local.yaml');
    await writeFile(extra, extraYaml || '{}\n');
    const run = await fx.rotate(['--no-verify', '-E', extra], { env });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('error[AGENT_SETTINGS_MISMATCH]');
    expect(run.stderr).toContain(said);
    expect(run.stderr).toContain(`deployment ${NS}/${AGENT}`);
    expect(run.stderr).toContain('--override-agent-settings');
    expect(enrollCalls()).toHaveLength(0);
    expect(fx.secret()).toBeUndefined();
    expectNoSecrets(run, [DEFAULT_API_KEY, 'a-different-api-key-0000000000000']);
  });

  it('--override-agent-settings goes on with the local value and lists what it overrode', async () => {
    await fx.writeConfig(`kube_resources_namespace: ${NS}\ncluster_name: another`);
    const run = await fx.rotate(['--no-verify', '--override-agent-settings', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const out = json(run.stdout) as { clusterAgent: { overridden: { setting: string; local: string; agent: string }[] } };
    expect(out.clusterAgent.overridden).toEqual([
      expect.objectContaining({ setting: 'cluster name (runner name)', local: 'another', agent: 'e2e-cluster' }),
    ]);
    expect(run.stderr).toContain('cluster name (runner name): OVERRIDDEN with another');
    expect(runnerName()).toMatch(/^another-/);
  });
});

describe('what cannot be read is not compared', () => {
  it('RBAC hides the keys Secret: the API key is "not compared", naming the verb and object; the run goes on with -c', async () => {
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    const limited = await fx.kubeconfigFor('limited', [
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: [SECRET], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['datadog-cluster-id'], verbs: ['get'] },
    ]);
    const run = await fx.run(['rotate-par-identity', '-c', fx.dir, '--kubeconfig', limited, '--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`not compared: API key (api_key_hash): get secret ${NS}/${KEYS_SECRET}: forbidden to this user`);
  });
});

describe('no cluster agent found', () => {
  beforeEach(() => {
    fx.kube.deleteObject('apps/v1', 'Deployment', NS, AGENT);
  });

  it('with no -c: stops, saying what was looked for and what to pass', async () => {
    const run = await rotateNoConfig();
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('error[AGENT_NOT_FOUND]');
    expect(run.stderr).toContain('app.kubernetes.io/component=cluster-agent');
    expect(run.stderr).toContain('--agent deployment/NAME -n NAMESPACE');
    expect(enrollCalls()).toHaveLength(0);
  });

  it('--agent naming a Deployment that does not exist: the same stop, naming it', async () => {
    const run = await rotateNoConfig(['--agent', 'deployment/nope', '-n', NS]);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(`deployment ${NS}/nope (--agent): does not exist`);
  });

  it("with -c: goes on with the local settings and says the agent was not found (issue 23's rules for creating the Secret hold)", async () => {
    await fx.writeConfig('cluster_name: e2e-cluster');
    const uncertain = await fx.rotate(['--no-verify', '-n', NS]);
    expect(uncertain.code, uncertain.stderr).toBe(9);
    expect(uncertain.stderr).toContain('error[SECRET_CREATE_UNCERTAIN]');
    const run = await fx.rotate(['--no-verify', '-n', NS, '--create']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('cluster agent not found');
    expect(fx.secret()).toBeDefined();
  });

  it('several agents and no --agent: stops, naming each and the --agent to pass', async () => {
    fx.kube.createObject(clusterAgentDeployment(NS, 'one'));
    fx.kube.createObject(clusterAgentDeployment('other', 'two'));
    const run = await rotateNoConfig();
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('error[AGENT_AMBIGUOUS]');
    expect(run.stderr).toContain(`--agent deployment/one -n ${NS}`);
    expect(run.stderr).toContain('--agent deployment/two -n other');
  });
});

describe('Operator layout (-E ConfigMap)', () => {
  const operatorLabels = {
    'app.kubernetes.io/component': 'cluster-agent',
    'agent.datadoghq.com/component': 'cluster-agent',
    'app.kubernetes.io/managed-by': 'datadog-operator',
  };
  const parFile = '/etc/datadog-agent/privateactionrunner.yaml';

  async function operatorAgent(fileYaml: string): Promise<void> {
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'datadog-clusteragent-privateactionrunner', namespace: NS },
      data: { 'privateactionrunner.yaml': fileYaml },
    } as never);
    const env = helmAgentEnv(fx.enrollment.url).filter((e) => !String(e.name).startsWith('DD_PRIVATE_ACTION_RUNNER_'));
    replaceAgent(
      {
        args: ['datadog-cluster-agent', 'start', `-E=${parFile}`],
        env,
        volumeMounts: [{ name: 'privateactionrunner-config', mountPath: parFile, subPath: 'privateactionrunner.yaml', readOnly: true }],
      },
      [{ name: 'privateactionrunner-config', configMap: { name: 'datadog-clusteragent-privateactionrunner' } }],
      operatorLabels,
    );
  }

  it('the Secret name from the -E file', async () => {
    await operatorAgent('private_action_runner:\n  enabled: true\n  self_enroll: true\n  identity_secret_name: op-identity\n');
    const run = await rotateNoConfig(['--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ secretName: 'op-identity', namespace: NS, clusterAgent: { layout: 'operator' } });
    expect(run.stderr).toContain(
      `identity Secret name: op-identity (configmap ${NS}/datadog-clusteragent-privateactionrunner key privateactionrunner.yaml mounted at ${parFile})`,
    );
  });

  it("no name in the file: the agent's default", async () => {
    await operatorAgent('private_action_runner:\n  enabled: true\n');
    const run = await rotateNoConfig(['--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ secretName: SECRET, namespace: NS });
  });
});

describe('Helm identityFromExistingSecret (selfEnroll false)', () => {
  const existingEnv = () =>
    helmAgentEnv(fx.enrollment.url, [
      { name: 'DD_PRIVATE_ACTION_RUNNER_SELF_ENROLL', value: 'false' },
      { name: 'DD_PRIVATE_ACTION_RUNNER_URN', valueFrom: { secretKeyRef: { name: 'user-identity', key: 'urn' } } },
      { name: 'DD_PRIVATE_ACTION_RUNNER_PRIVATE_KEY', valueFrom: { secretKeyRef: { name: 'user-identity', key: 'private_key' } } },
    ]);

  it("the agent's default Secret does not exist: the user's Secret is the identity in use, rotated, and a rollout is said to be needed", async () => {
    expect((await fx.rotate(['--no-verify', '--secret-name', 'user-identity'])).code).toBe(0);
    const before = fx.secretData('user-identity').urn;
    replaceAgent({ env: existingEnv() });
    const run = await rotateNoConfig(['--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({
      secretName: 'user-identity',
      action: 'updated',
      clusterAgent: { layout: 'helm-existing-secret' },
    });
    expect(fx.secretData('user-identity').urn).not.toBe(before);
    expect(fx.secret(SECRET)).toBeUndefined();
    expect(run.stderr).toContain('only after a rollout');
    expect(run.stderr).toContain(`kubectl rollout restart deployment/${AGENT} -n ${NS}`);
  });

  it("the agent's default Secret exists: it is the identity in use (the agent takes it first)", async () => {
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    expect((await fx.rotate(['--no-verify', '--secret-name', 'user-identity'])).code).toBe(0);
    const userUrn = fx.secretData('user-identity').urn;
    replaceAgent({ env: existingEnv() });
    const run = await rotateNoConfig(['--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ secretName: SECRET, action: 'updated' });
    expect(fx.secretData('user-identity').urn).toBe(userUrn);
  });
});
