import type { V1Deployment } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { configFlagsOf, expandKubeletRefs, imageVersion, type ObjectRead, readPodTemplate } from '../../src/agent/pod-template.js';
import { agentConfigOf, mergeAgentSettings } from '../../src/session/agent-settings.js';
import { loadAgentConfig } from '../../src/config/agent-config.js';

// The cluster agent's settings read from its Deployment as the kubelet and the agent would
// (docs/configuration.md, "How the agent's Pod template is read"), on fixture Deployments.

const NS = 'datadog';

function deployment(
  container: Record<string, unknown>,
  volumes: unknown[] = [],
  labels: Record<string, string> = { 'app.kubernetes.io/managed-by': 'Helm' },
): V1Deployment {
  return {
    metadata: { name: 'dca', namespace: NS, labels },
    spec: {
      selector: {},
      template: {
        spec: {
          containers: [
            { name: 'init', image: 'busybox' },
            { name: 'cluster-agent', image: 'gcr.io/datadoghq/cluster-agent:7.81.0', ...container },
          ],
          volumes,
        },
      },
    },
  } as unknown as V1Deployment;
}

type Objects = Record<string, Record<string, string> | 'forbidden'>;

function reader(objects: Objects) {
  return async (kind: string, namespace: string, name: string): Promise<ObjectRead> => {
    const found = objects[`${kind}/${namespace}/${name}`];
    if (found === 'forbidden') return { denied: `get ${kind} ${namespace}/${name}: forbidden to this user` };
    return found ? { data: found } : { missing: true };
  };
}

describe('env as the kubelet builds it', () => {
  it('value, secretKeyRef, configMapKeyRef, fieldRef metadata.namespace; env over envFrom; prefix; later envFrom wins', async () => {
    const read = await readPodTemplate(
      deployment({
        envFrom: [
          { configMapRef: { name: 'base' } },
          { secretRef: { name: 'keys' }, prefix: 'DD_' },
          { configMapRef: { name: 'absent', optional: true } },
        ],
        env: [
          { name: 'DD_SITE', value: 'datadoghq.eu' },
          { name: 'DD_CLUSTER_NAME', valueFrom: { configMapKeyRef: { name: 'base', key: 'cluster' } } },
          { name: 'DD_API_KEY', valueFrom: { secretKeyRef: { name: 'datadog-secret', key: 'api-key' } } },
          { name: 'DD_KUBE_RESOURCES_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        ],
      }),
      reader({
        [`configmap/${NS}/base`]: { DD_SITE: 'datadoghq.com', cluster: 'prod', 'not a name': 'x' },
        [`secret/${NS}/keys`]: { APP_KEY: 'app', SITE: 'us3.datadoghq.com' },
        [`secret/${NS}/datadog-secret`]: { 'api-key': 'the-api-key' },
      }),
    );
    expect(read.container).toBe('cluster-agent');
    expect(read.version).toBe('7.81.0');
    expect(read.layout).toBe('helm');
    expect(read.env).toMatchObject({
      DD_SITE: 'datadoghq.eu',
      DD_APP_KEY: 'app',
      cluster: 'prod',
      DD_CLUSTER_NAME: 'prod',
      DD_API_KEY: 'the-api-key',
      DD_KUBE_RESOURCES_NAMESPACE: NS,
    });
    expect(read.env).not.toHaveProperty('not a name');
    expect(read.envSources.DD_API_KEY).toBe(`secret ${NS}/datadog-secret key api-key (env DD_API_KEY of deployment ${NS}/dca)`);
    expect(read.envSources.DD_APP_KEY).toBe(`secret ${NS}/keys key APP_KEY (envFrom of deployment ${NS}/dca)`);
    expect(read.envUnknown.POD_NAME).toContain('metadata.name');
    expect(read.notRead).toEqual([]);
  });

  it('$(VAR) refers to earlier variables only; $$ escapes; an unknown reference stays', () => {
    const vars: Record<string, string> = { A: 'x' };
    expect(expandKubeletRefs('$(A)-$(B)-$$(A)-$', (n) => vars[n])).toBe('x-$(B)-$(A)-$');
  });

  it('a Secret RBAC forbids: the variable is unknown and the verb and object are said', async () => {
    const read = await readPodTemplate(
      deployment({ env: [{ name: 'DD_API_KEY', valueFrom: { secretKeyRef: { name: 'datadog-secret', key: 'api-key' } } }] }),
      reader({ [`secret/${NS}/datadog-secret`]: 'forbidden' }),
    );
    expect(read.env).not.toHaveProperty('DD_API_KEY');
    expect(read.envUnknown.DD_API_KEY).toBe(`get secret ${NS}/datadog-secret: forbidden to this user`);
    expect(read.notRead).toEqual([`get secret ${NS}/datadog-secret: forbidden to this user`]);
  });
});

describe('config files from command and args', () => {
  it.each([
    [['datadog-cluster-agent', 'start', '-E=/etc/a.yaml'], { extra: ['/etc/a.yaml'] }],
    [['agent', '-c', '/conf', '--extracfgpath', '/e1', '-E/e2', '--extracfgpath=/e3'], { cfgPath: '/conf', extra: ['/e1', '/e2', '/e3'] }],
    [['agent', '--cfgpath=/conf/x.yaml'], { cfgPath: '/conf/x.yaml', extra: [] }],
  ])('%j', (argv, expected) => {
    expect(configFlagsOf(argv)).toEqual(expected);
  });

  it('Operator layout: -E in args, a subPath mount of a ConfigMap key; env wins over the file, a later -E over an earlier one', async () => {
    const read = await readPodTemplate(
      deployment(
        {
          args: ['datadog-cluster-agent', 'start', '-E=/etc/datadog-agent/privateactionrunner.yaml', '-E', '/etc/extra/$(EXTRA)'],
          env: [
            { name: 'EXTRA', value: 'later.yaml' },
            { name: 'DD_CLUSTER_NAME', value: 'from-env' },
          ],
          volumeMounts: [
            { name: 'par', mountPath: '/etc/datadog-agent/privateactionrunner.yaml', subPath: 'privateactionrunner.yaml' },
            { name: 'extra', mountPath: '/etc/extra' },
          ],
        },
        [
          { name: 'par', configMap: { name: 'dda-clusteragent-privateactionrunner' } },
          { name: 'extra', projected: { sources: [{ secret: { name: 'more', items: [{ key: 'k', path: 'later.yaml' }] } }] } },
        ],
        { 'app.kubernetes.io/managed-by': 'datadog-operator' },
      ),
      reader({
        [`configmap/${NS}/dda-clusteragent-privateactionrunner`]: {
          'privateactionrunner.yaml':
            'private_action_runner:\n  enabled: true\n  identity_secret_name: op-identity\ncluster_name: from-file\nsite: datadoghq.eu\n',
        },
        [`secret/${NS}/more`]: { k: 'site: us5.datadoghq.com\n' },
      }),
    );
    expect(read.layout).toBe('operator');
    expect(read.files[0]).toContain("main config /etc/datadog-agent/datadog-cluster.yaml: not mounted (the image's own");
    expect(read.layers.map((l) => l.source)).toEqual([
      `configmap ${NS}/dda-clusteragent-privateactionrunner key privateactionrunner.yaml mounted at /etc/datadog-agent/privateactionrunner.yaml`,
      `secret ${NS}/more key k mounted at /etc/extra/later.yaml`,
    ]);
    const config = await agentConfigOf(read);
    expect(config.getString('private_action_runner.identity_secret_name')).toBe('op-identity');
    expect(config.getString('cluster_name')).toBe('from-env');
    expect(config.sourceOf('cluster_name')).toBe(`env DD_CLUSTER_NAME of deployment ${NS}/dca`);
    expect(config.getString('site')).toBe('us5.datadoghq.com');
    expect(config.sourceOf('site')).toContain('secret datadog/more key k');
  });

  it('identityFromExistingSecret: the identity env vars are found and the layout named', async () => {
    const read = await readPodTemplate(
      deployment({
        env: [
          { name: 'DD_PRIVATE_ACTION_RUNNER_URN', valueFrom: { secretKeyRef: { name: 'mine', key: 'urn' } } },
          { name: 'DD_PRIVATE_ACTION_RUNNER_PRIVATE_KEY', valueFrom: { secretKeyRef: { name: 'mine', key: 'private_key' } } },
        ],
      }),
      reader({ [`secret/${NS}/mine`]: { urn: 'u', private_key: 'k' } }),
    );
    expect(read.layout).toBe('helm-existing-secret');
    expect(read.identityEnv).toEqual({
      urn: { namespace: NS, name: 'mine', key: 'urn' },
      privateKey: { namespace: NS, name: 'mine', key: 'private_key' },
    });
  });

  it('the image tag is the version only when it is one', () => {
    expect(imageVersion('registry:5000/datadog/cluster-agent:7.81.0@sha256:abc')).toBe('7.81.0');
    expect(imageVersion('registry:5000/datadog/cluster-agent')).toBeUndefined();
    expect(imageVersion('cluster-agent:latest')).toBeUndefined();
  });
});

describe('outcomes compared with the local settings', () => {
  async function agent(env: Record<string, unknown>[]) {
    const read = await readPodTemplate(deployment({ env }), reader({ [`secret/${NS}/datadog-secret`]: { 'api-key': 'agent-key' } }));
    return { read, config: await agentConfigOf(read), how: 'test' };
  }

  it("a value the local side does not state is the agent's; a stated one with the same outcome is fine", async () => {
    const a = await agent([
      { name: 'DD_SITE', value: 'datadoghq.eu' },
      { name: 'DD_CLUSTER_NAME', value: 'prod' },
    ]);
    const local = await loadAgentConfig({ env: { DD_SITE: 'datadoghq.eu' } });
    const merged = mergeAgentSettings({ config: local, env: { DD_SITE: 'datadoghq.eu' } }, a, false);
    expect(merged.config.getString('cluster_name')).toBe('prod');
    expect(merged.compared.find((c) => c.setting === 'site and enrollment endpoint')?.outcome).toBe('same');
    expect(merged.compared.find((c) => c.setting === 'cluster name (runner name)')?.outcome).toBe('agent');
  });

  it('a stated value with another outcome stops, naming both and both sources, keys only by hash; --override-agent-settings lists it', async () => {
    const a = await agent([{ name: 'DD_API_KEY', valueFrom: { secretKeyRef: { name: 'datadog-secret', key: 'api-key' } } }]);
    const env = { DD_API_KEY: 'local-key', DD_SITE: 'datadoghq.eu' };
    const local = await loadAgentConfig({ env });
    let thrown: Error & { code?: string } = new Error('none');
    try {
      mergeAgentSettings({ config: local, env }, a, false);
    } catch (err) {
      thrown = err as Error;
    }
    expect(thrown.code).toBe('AGENT_SETTINGS_MISMATCH');
    expect(thrown.message).toContain('region eu1');
    expect(thrown.message).toContain('region us1');
    expect(thrown.message).toContain('api_key_hash');
    expect(thrown.message).not.toContain('local-key');
    expect(thrown.message).not.toContain('agent-key');
    const merged = mergeAgentSettings({ config: local, env }, a, true);
    expect(merged.overridden.map((o) => o.setting)).toEqual(['site and enrollment endpoint', 'API key (api_key_hash)']);
    expect(merged.config.getString('api_key')).toBe('local-key');
  });

  it('a setting the agent could not be read for is not compared', async () => {
    const read = await readPodTemplate(
      deployment({ env: [{ name: 'DD_API_KEY', valueFrom: { secretKeyRef: { name: 'datadog-secret', key: 'api-key' } } }] }),
      reader({ [`secret/${NS}/datadog-secret`]: 'forbidden' }),
    );
    const env = { DD_API_KEY: 'local-key' };
    const merged = mergeAgentSettings(
      { config: await loadAgentConfig({ env }), env },
      { read, config: await agentConfigOf(read), how: 'test' },
      false,
    );
    expect(merged.notCompared).toEqual([`API key (api_key_hash): get secret ${NS}/datadog-secret: forbidden to this user`]);
  });
});
