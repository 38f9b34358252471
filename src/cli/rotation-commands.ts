import type { RotationOptions } from '../rotation/options.js';
import { DURATIONS } from './duration-flags.js';
import {
  agentChoiceOptions,
  ALLOW_REGION_CHANGE_FLAG,
  CLUSTER_CONFIG_FLAGS,
  CONFIG_FLAGS,
  CREDENTIAL_FLAGS,
  configOptions,
  credentialOptions,
  HOSTNAME_FLAG,
  ENV_FROM_RUNNER_FLAG,
  KUBE_FLAGS,
  kubeOptions,
  localOptions,
  OUTPUT_FLAGS,
  outputOptions,
  OVERRIDE_AGENT_SETTINGS_FLAG,
  ROLLOUT_FLAGS,
  rolloutOptions,
} from './shared-flags.js';
import type { CommandSpec } from './spec.js';

// The two rotate commands: a local identity file (or a Helm chart's Secret), and the cluster agent's Secret.

export const rotateIdentity: CommandSpec<RotationOptions> = {
  name: 'rotate-identity',
  stopsOnSignal: true,
  description: 'enroll a new runner identity and replace the local identity file atomically (standalone/node runner)',
  flags: [
    ...CONFIG_FLAGS,
    ...CREDENTIAL_FLAGS,
    { flags: '--timeout <duration>', option: 'timeoutSeconds', help: 'deadline of the whole command (every request, enrollment, verification; not the --rollout wait)', default: 120, duration: DURATIONS.timeout },
    { flags: '--dry-run', help: 'run every check and print every step; no enrollment, no write' },
    { flags: '--no-verify', help: 'skip the signed health check of the new identity' },
    { flags: '--k8s-secret <name>', help: 'rotate the Secret of a runner installed with the Helm chart (RUNNER_URN / RUNNER_PRIVATE_KEY) instead of a file' },
    { flags: '-n, --namespace <ns>', help: 'namespace of --k8s-secret and --rollout' },
    { flags: '--kubeconfig <path>', help: 'kubeconfig for --k8s-secret and --rollout' },
    { flags: '--context <name>', help: 'kubeconfig context' },
    { flags: '--no-keep-previous', help: 'with --k8s-secret: do not keep PREVIOUS_RUNNER_URN / PREVIOUS_RUNNER_PRIVATE_KEY' },
    HOSTNAME_FLAG('the hostname to store, instead of asking the running agent (IPC) or resolving it as the agent does'),
    ENV_FROM_RUNNER_FLAG,
    OVERRIDE_AGENT_SETTINGS_FLAG,
    ALLOW_REGION_CHANGE_FLAG,
    ...ROLLOUT_FLAGS,
    ...OUTPUT_FLAGS,
  ],
  examples: [
    { what: 'Rotate a node runner, verify it, and restart the service', command: 'par-identity rotate-identity -c /etc/datadog-agent && sudo systemctl restart datadog-agent-action.service' },
    { what: 'Check everything without enrolling (for a change ticket)', command: 'par-identity rotate-identity --dry-run --json' },
    { what: 'Pipe the API key from a secret manager, never through argv', command: 'vault kv get -field=api_key secret/dd | par-identity rotate-identity --api-key-file -' },
  ],
  run: {
    load: () => import('../commands/rotate-identity.js'),
    toOptions: (raw, io) => ({
      ...localOptions(raw),
      ...outputOptions(raw, io),
      ...credentialOptions(raw),
      ...kubeOptions(raw),
      ...rolloutOptions(raw),
      ...agentChoiceOptions(raw),
      ...(raw.k8sSecret ? { k8sSecret: raw.k8sSecret as string } : {}),
      keepPrevious: raw.keepPrevious !== false,
      timeoutSeconds: raw.timeoutSeconds as number,
      dryRun: Boolean(raw.dryRun),
      verify: raw.verify !== false,
    }),
  },
};

export const rotateParIdentity: CommandSpec<RotationOptions> = {
  name: 'rotate-par-identity',
  stopsOnSignal: true,
  description: 'enroll a new identity for the cluster agent and update the shared Kubernetes Secret (resourceVersion-guarded, previous kept)',
  flags: [
    ...CLUSTER_CONFIG_FLAGS,
    ...KUBE_FLAGS,
    ...CREDENTIAL_FLAGS,
    { flags: '--timeout <duration>', option: 'timeoutSeconds', help: 'deadline of the whole command (every request, enrollment, verification; not the --rollout wait)', default: 120, duration: DURATIONS.timeout },
    { flags: '--dry-run', help: 'every read and the server-side dry-run update; no enrollment, no write' },
    { flags: '--no-verify', help: 'skip the signed health check of the new identity' },
    { flags: '--create', help: "create the Secret when missing even where no cluster agent is found (off-cluster with -n): the namespace must be the agent's" },
    { flags: '--no-keep-previous', help: 'do not keep the previous identity as previous_urn / previous_private_key' },
    OVERRIDE_AGENT_SETTINGS_FLAG,
    ALLOW_REGION_CHANGE_FLAG,
    ...ROLLOUT_FLAGS,
    ...OUTPUT_FLAGS,
  ],
  examples: [
    { what: 'Rotate the cluster agent identity Secret from a workstation, checking RBAC first', command: 'par-identity rotate-par-identity --context prod -n datadog --dry-run && par-identity rotate-par-identity --context prod -n datadog' },
    { what: 'Rotate, then restart the cluster agent create-before-delete', command: 'par-identity rotate-par-identity -n datadog --rollout deployment/datadog-cluster-agent' },
  ],
  run: {
    load: () => import('../commands/rotate-par-identity.js'),
    toOptions: (raw, io) => ({
      ...configOptions(raw),
      ...kubeOptions(raw),
      ...credentialOptions(raw),
      ...outputOptions(raw, io),
      ...(raw.create ? { create: true } : {}),
      ...rolloutOptions(raw),
      ...agentChoiceOptions(raw),
      timeoutSeconds: raw.timeoutSeconds as number,
      dryRun: Boolean(raw.dryRun),
      verify: raw.verify !== false,
      keepPrevious: raw.keepPrevious !== false,
    }),
  },
};
