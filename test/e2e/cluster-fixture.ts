import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY, type EnrollmentEmulator, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import { type KubeEmulator, type KubeObject, type PolicyRule, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';
import { type CliRun, type RunOptions, runCli } from './run-cli.js';

// A cluster agent's world: the Kubernetes API emulator, the enrollment emulator, a
// datadog-cluster.yaml, and kubeconfigs for an admin and for restricted service accounts.

export const NS = 'datadog';
export const SECRET = 'private-action-runner-identity';
/** The cluster agent's Deployment the fixture seeds (the Helm chart's `<release>-cluster-agent`). */
export const AGENT = 'dd-release-cluster-agent';

export interface ClusterFixture {
  dir: string;
  kube: KubeEmulator;
  enrollment: EnrollmentEmulator;
  adminKubeconfig: string;
  env: Record<string, string>;
  run(args: string[], options?: RunOptions): Promise<CliRun>;
  /** rotate-par-identity with the admin kubeconfig and the fixture's config. */
  rotate(extra?: string[], options?: RunOptions): Promise<CliRun>;
  kubeconfigFor(name: string, rules: PolicyRule[], namespace?: string): Promise<string>;
  writeConfig(extra?: string): Promise<void>;
  secret(name?: string, namespace?: string): KubeObject | undefined;
  secretData(name?: string, namespace?: string): Record<string, string>;
  close(): Promise<void>;
}

/** A cluster-agent Deployment labelled as the datadog Helm chart labels it (`<release>-cluster-agent`); `container` adds to its cluster-agent container (env, args, mounts). */
export function clusterAgentDeployment(
  namespace: string,
  name = AGENT,
  labels: Record<string, string> = { 'app.kubernetes.io/component': 'cluster-agent', 'app.kubernetes.io/managed-by': 'Helm' },
  container: Record<string, unknown> = {},
  volumes: unknown[] = [],
): never {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{ name: 'cluster-agent', image: 'gcr.io/datadoghq/cluster-agent:7.81.0', ...container }],
          ...(volumes.length ? { volumes } : {}),
        },
      },
    },
  } as never;
}

/** The keys Secret the Helm chart's env reads (`datadog-secret`, keys api-key and app-key). */
export const KEYS_SECRET = 'datadog-secret';

/**
 * The env the Helm chart gives the cluster-agent container, with the fixture's settings: the keys by
 * secretKeyRef, the namespace by fieldRef, the enrollment emulator as dd_url. `extra` is appended
 * (a later variable of the same name wins).
 */
export function helmAgentEnv(enrollmentUrl: string, extra: Record<string, unknown>[] = []): Record<string, unknown>[] {
  return [
    { name: 'DD_API_KEY', valueFrom: { secretKeyRef: { name: KEYS_SECRET, key: 'api-key' } } },
    { name: 'DD_APP_KEY', valueFrom: { secretKeyRef: { name: KEYS_SECRET, key: 'app-key' } } },
    { name: 'DD_KUBE_RESOURCES_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'DD_CLUSTER_NAME', value: 'e2e-cluster' },
    { name: 'DD_DD_URL', value: enrollmentUrl },
    { name: 'DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS', value: 'true' },
    { name: 'DD_PRIVATE_ACTION_RUNNER_ENABLED', value: 'true' },
    { name: 'DD_PRIVATE_ACTION_RUNNER_SELF_ENROLL', value: 'true' },
    ...extra,
  ];
}

/**
 * A cluster agent whose settings agree with a test's local config (the Helm layout: its env, and its
 * keys Secret holding the emulator's keys), so that a local -c is compared and found the same
 * (docs/configuration.md, "The running agent's settings"): the Deployment, then the keys Secret.
 */
export function agreeingAgent(
  namespace: string,
  enrollmentUrl: string,
  options: { name?: string; labels?: Record<string, string>; env?: Record<string, unknown>[] } = {},
): never[] {
  const keys = { 'api-key': Buffer.from(DEFAULT_API_KEY).toString('base64'), 'app-key': Buffer.from(DEFAULT_APP_KEY).toString('base64') };
  return [
    clusterAgentDeployment(namespace, options.name, options.labels, { env: helmAgentEnv(enrollmentUrl, options.env) }),
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: KEYS_SECRET, namespace }, type: 'Opaque', data: keys } as never,
  ];
}

export async function clusterFixture(): Promise<ClusterFixture> {
  const [kube, enrollment] = await Promise.all([startKubeEmulator(), startEnrollmentEmulator()]);
  seedNamespaces(kube, ['default', NS, 'other']);
  // The cluster agent as the Helm chart deploys it (its component label): off-cluster, that is how
  // the tool finds the agent's own namespace, where the cluster-id ConfigMap lives (docs/protocol.md §6c).
  // Its settings are the fixture config's (the Helm layout, docs/configuration.md): a local -c agrees with it.
  for (const object of agreeingAgent(NS, enrollment.url)) kube.createObject(object);
  const dir = await mkdtemp(join(tmpdir(), 'par-cluster-'));
  const adminKubeconfig = join(dir, 'admin.kubeconfig');
  await kube.writeKubeconfig(adminKubeconfig, { token: kube.adminToken, namespace: NS });
  // HOME without ~/.kube/config, so nothing but what a test passes is used.
  const env = { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1', HOME: dir };
  const fx: ClusterFixture = {
    dir,
    kube,
    enrollment,
    adminKubeconfig,
    env,
    run: (args, options = {}) => runCli(args, { ...options, env: { ...env, ...options.env } }),
    rotate: (extra = [], options = {}) => fx.run(['rotate-par-identity', '-c', dir, '--kubeconfig', adminKubeconfig, ...extra], options),
    async kubeconfigFor(name, rules, namespace = NS) {
      const token = `token-${name}`;
      kube.addToken(token, { user: `system:serviceaccount:${namespace}:${name}`, namespace, rules });
      const path = join(dir, `${name}.kubeconfig`);
      await kube.writeKubeconfig(path, { token, namespace });
      return path;
    },
    async writeConfig(extra = `kube_resources_namespace: ${NS}\ncluster_name: e2e-cluster`) {
      const yaml = [
        `api_key: ${DEFAULT_API_KEY}`,
        `app_key: ${DEFAULT_APP_KEY}`,
        `dd_url: ${enrollment.url}`,
        'private_action_runner:',
        '  enabled: true',
        extra,
        '',
      ].join('\n');
      await writeFile(join(dir, 'datadog-cluster.yaml'), yaml);
    },
    secret: (name = SECRET, namespace = NS) => kube.getObject('v1', 'Secret', namespace, name),
    secretData(name = SECRET, namespace = NS) {
      const data = (fx.secret(name, namespace)?.data ?? {}) as Record<string, string>;
      return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    },
    async close() {
      await Promise.all([kube.close(), enrollment.close()]);
      await rm(dir, { recursive: true, force: true });
    },
  };
  await fx.writeConfig();
  return fx;
}

/** A fake Pod filesystem root holding the service-account files the in-cluster mode reads. */
export async function serviceAccountRoot(fx: ClusterFixture, namespace: string, token?: string): Promise<string> {
  const root = join(fx.dir, 'podroot');
  const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
  await mkdir(sa, { recursive: true });
  await writeFile(join(sa, 'namespace'), namespace);
  if (token) {
    await writeFile(join(sa, 'token'), token);
    await writeFile(join(sa, 'ca.crt'), fx.kube.caCert ?? '');
  }
  return root;
}
