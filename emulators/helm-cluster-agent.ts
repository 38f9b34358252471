/**
 * A cluster agent as the datadog Helm chart deploys it (docs/protocol.md §6d, layout "Helm self-enroll"):
 * Deployment `<release>-cluster-agent` labelled for both installers, its PAR settings as env on the
 * `cluster-agent` container, the keys by secretKeyRef from the keys Secret. The lab, the demo and the
 * tests seed it so `rotate-par-identity --agent deployment/datadog-cluster-agent` has an agent to read.
 * Objects only: whoever seeds them creates them (emulator store, kubectl, a real control plane).
 */

export interface HelmClusterAgentOptions {
  namespace?: string;
  /** The Deployment's name, `<release>-cluster-agent`. */
  name?: string;
  /** The Secret of datadog.apiKeyExistingSecret / appKeyExistingSecret, keys `api-key` and `app-key`. */
  keysSecret?: string;
  identitySecretName?: string;
  clusterName: string;
  apiKey: string;
  appKey: string;
  /** `datadog.site` (DD_SITE); omitted when unset, as the chart does. */
  site?: string;
  /** `datadog.dd_url` (DD_DD_URL) with the agent's internal switch that enrolls at it: how the lab points at an emulator. */
  ddUrl?: string;
  image?: string;
  replicas?: number;
}

// biome-ignore lint/suspicious/noExplicitAny: plain Kubernetes objects, typed by their consumer
type Obj = Record<string, any>;

const HELM_CLUSTER_AGENT = {
  namespace: 'datadog',
  name: 'datadog-cluster-agent',
  keysSecret: 'datadog-secret',
  identitySecretName: 'datadog-private-action-runner-identity',
  image: 'gcr.io/datadoghq/cluster-agent:7.81.1',
} as const;

/** The token and keys Secrets and the Deployment, in the order to create them. */
export function helmClusterAgentObjects(o: HelmClusterAgentOptions): Obj[] {
  const namespace = o.namespace ?? HELM_CLUSTER_AGENT.namespace;
  const name = o.name ?? HELM_CLUSTER_AGENT.name;
  const keysSecret = o.keysSecret ?? HELM_CLUSTER_AGENT.keysSecret;
  const fromKeys = (key: string) => ({ valueFrom: { secretKeyRef: { name: keysSecret, key } } });
  const env = [
    { name: 'DD_API_KEY', ...fromKeys('api-key') },
    { name: 'DD_APP_KEY', ...fromKeys('app-key') },
    { name: 'DD_CLUSTER_NAME', value: o.clusterName },
    ...(o.site ? [{ name: 'DD_SITE', value: o.site }] : []),
    ...(o.ddUrl
      ? [
          { name: 'DD_DD_URL', value: o.ddUrl },
          { name: 'DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS', value: 'true' },
        ]
      : []),
    { name: 'DD_PRIVATE_ACTION_RUNNER_ENABLED', value: 'true' },
    { name: 'DD_PRIVATE_ACTION_RUNNER_SELF_ENROLL', value: 'true' },
    { name: 'DD_PRIVATE_ACTION_RUNNER_IDENTITY_USE_K8S_SECRET', value: 'true' },
    { name: 'DD_PRIVATE_ACTION_RUNNER_IDENTITY_SECRET_NAME', value: o.identitySecretName ?? HELM_CLUSTER_AGENT.identitySecretName },
    { name: 'DD_KUBE_RESOURCES_NAMESPACE', value: namespace },
    // Not a PAR setting: the node agents' token, from a Secret the rotator's Role does not grant.
    { name: 'DD_CLUSTER_AGENT_AUTH_TOKEN', valueFrom: { secretKeyRef: { name, key: 'token' } } },
  ];
  const podLabels = { app: name, 'app.kubernetes.io/component': 'cluster-agent', 'agent.datadoghq.com/component': 'cluster-agent' };
  return [
    // The chart's cluster-agent token Secret (`<release>-cluster-agent`), as the chart makes it.
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      type: 'Opaque',
      data: { token: Buffer.from('0'.repeat(32)).toString('base64') },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: keysSecret, namespace },
      type: 'Opaque',
      data: { 'api-key': Buffer.from(o.apiKey).toString('base64'), 'app-key': Buffer.from(o.appKey).toString('base64') },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name,
        namespace,
        labels: {
          'app.kubernetes.io/component': 'cluster-agent',
          'agent.datadoghq.com/component': 'cluster-agent',
          'app.kubernetes.io/managed-by': 'Helm',
          'app.kubernetes.io/name': name,
        },
      },
      spec: {
        replicas: o.replicas ?? 0,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: podLabels },
          spec: {
            containers: [
              {
                name: 'cluster-agent',
                image: o.image ?? HELM_CLUSTER_AGENT.image,
                env,
                resources: { requests: { cpu: '100m', memory: '64Mi' } },
              },
            ],
          },
        },
      },
    },
  ];
}
