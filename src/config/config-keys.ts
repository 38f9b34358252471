// The agent config keys this tool reads (docs/protocol.md §9), with the Go agent's defaults. The same table
// feeds the README and the man page, so documentation cannot drift from behaviour.

export interface ConfigKey {
  key: string;
  default: string | boolean | Record<string, string> | undefined;
  use: string;
  /** Extra environment names the agent binds besides DD_<KEY>. */
  aliases?: string[];
  secret?: boolean;
}

export const CONFIG_KEYS: ConfigKey[] = [
  { key: 'api_key', default: undefined, use: 'enrollment API key; its SHA-256 is written as api_key_hash', secret: true },
  { key: 'app_key', default: undefined, use: 'enrollment application key (owned enrollment)', secret: true },
  { key: 'site', default: 'datadoghq.com', use: 'Datadog site: API host and URN region' },
  { key: 'dd_url', default: undefined, use: 'intake URL; its host decides the site when it is a Datadog host', aliases: ['DD_URL'] },
  { key: 'hostname', default: undefined, use: 'hostname written to the identity file (else the OS hostname)' },
  {
    key: 'cluster_name',
    default: undefined,
    use: 'runner-name prefix on the cluster agent; appended to a Kubernetes node name as the hostname (only a valid lower-case name)',
  },
  { key: 'kube_resources_namespace', default: undefined, use: 'namespace of the identity Secret' },
  { key: 'kubernetes_kubeconfig_path', default: undefined, use: 'kubeconfig used outside a Pod' },
  { key: 'auth_token_file_path', default: undefined, use: 'its directory is the identity-file fallback directory' },
  { key: 'private_action_runner.enabled', default: false, use: 'rotation is refused while false' },
  {
    key: 'private_action_runner.split_enabled',
    default: false,
    use: "split mode: the runner resolves its hostname with its own chain, not the core agent's IPC answer",
  },
  { key: 'private_action_runner.identity_file_path', default: undefined, use: 'identity file of a standalone/node runner' },
  { key: 'private_action_runner.identity_use_k8s_secret', default: true, use: 'cluster agent keeps the identity in a Secret' },
  {
    key: 'private_action_runner.identity_secret_name',
    default: 'private-action-runner-identity',
    use: 'name of the identity Secret',
  },
  { key: 'private_action_runner.api_key_only_enrollment', default: false, use: 'enroll with the API key only' },
  { key: 'private_action_runner.opms_extra_headers', default: {}, use: 'extra headers on enrollment and health-check requests' },
];

export function envNameOf(key: string): string {
  return `DD_${key.toUpperCase().replaceAll('.', '_')}`;
}
