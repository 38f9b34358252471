import type { Io } from '../io.js';
import { switchFlag, withDefault } from './flag.js';
import {
  AGENT_FLAGS,
  agentChoiceOptions,
  agentOptions,
  ALLOW_REGION_CHANGE,
  AGENT_CONFIG_FLAGS,
  CONFIG_FLAGS,
  CONTEXT,
  CREDENTIAL_FLAGS,
  configOptions,
  credentialOptions,
  DRY_RUN,
  ENV_FROM_RUNNER,
  HOSTNAME,
  K8S_SECRET,
  KUBE_FLAGS,
  KUBECONFIG,
  kubeOptions,
  localOptions,
  NAMESPACE,
  NO_KEEP_PREVIOUS,
  NO_VERIFY,
  OUTPUT_FLAGS,
  OVERRIDE_AGENT_SETTINGS,
  outputOptions,
  ROLLOUT_FLAGS,
  rolloutOptions,
  TIMEOUT,
} from './shared-flags.js';
import { type CommandInput, defineCommand, type Stoppable } from './spec.js';

// The two rotate commands: a local identity file (or a Helm chart's Secret), and the cluster agent's Secret.
// Each command's options type is what its toOptions builds from its flags (declared apart from the
// defineCommand literal, so src/commands/<name>.ts names it with `import type` and tsc never goes round
// through `load`); the command module hands it to the pipeline, whose RotationInput tsc checks it against.

/** What only a program gives a rotation (src/api/commands.ts): the keys themselves, never a flag (argv is world-readable in /proc). */
interface ProgramKeys {
  apiKey?: string;
  appKey?: string;
}

const rotateIdentityFlags = {
  ...CONFIG_FLAGS,
  ...CREDENTIAL_FLAGS,
  timeoutSeconds: withDefault(TIMEOUT, 120),
  dryRun: DRY_RUN,
  verify: NO_VERIFY,
  k8sSecret: K8S_SECRET,
  namespace: NAMESPACE,
  kubeconfig: KUBECONFIG,
  context: CONTEXT,
  keepPrevious: NO_KEEP_PREVIOUS,
  hostname: HOSTNAME,
  envFromRunner: ENV_FROM_RUNNER,
  overrideAgentSettings: OVERRIDE_AGENT_SETTINGS,
  allowRegionChange: ALLOW_REGION_CHANGE,
  ...ROLLOUT_FLAGS,
  ...OUTPUT_FLAGS,
};

function rotateIdentityOptions(v: CommandInput<typeof rotateIdentityFlags>, io: Io) {
  return {
    ...localOptions(v),
    ...outputOptions(v, io),
    ...credentialOptions(v),
    ...kubeOptions(v),
    ...rolloutOptions(v),
    ...agentChoiceOptions(v),
    ...(v.k8sSecret ? { k8sSecret: v.k8sSecret } : {}),
    keepPrevious: v.keepPrevious,
    timeoutSeconds: v.timeoutSeconds,
    dryRun: v.dryRun,
    verify: v.verify,
  };
}

/** What src/commands/rotate-identity.ts takes: its flags' options, the stop, and a program's keys. */
export type RotateIdentityOptions = ReturnType<typeof rotateIdentityOptions> & Stoppable & ProgramKeys;

export const rotateIdentity = defineCommand({
  name: 'rotate-identity',
  stopsOnSignal: true,
  description: 'enroll a new runner identity and replace the local identity file atomically (standalone/node runner)',
  flags: rotateIdentityFlags,
  examples: [
    {
      what: 'Rotate a node runner, verify it, and restart the service',
      command: 'par-identity rotate-identity -c /etc/datadog-agent && sudo systemctl restart datadog-agent-action.service',
    },
    { what: 'Check everything without enrolling (for a change ticket)', command: 'par-identity rotate-identity --dry-run --json' },
    {
      what: 'Pipe the API key from a secret manager, never through argv',
      command: 'vault kv get -field=api_key secret/dd | par-identity rotate-identity --api-key-file -',
    },
  ],
  run: {
    load: () => import('../commands/rotate-identity.js'),
    toOptions: rotateIdentityOptions,
  },
});

const rotateParIdentityFlags = {
  ...AGENT_CONFIG_FLAGS,
  ...KUBE_FLAGS,
  ...AGENT_FLAGS,
  ...CREDENTIAL_FLAGS,
  timeoutSeconds: withDefault(TIMEOUT, 120),
  dryRun: DRY_RUN,
  verify: NO_VERIFY,
  create: switchFlag(
    '--create',
    "create the Secret when missing even where no cluster agent is found (off-cluster with -n): the namespace must be the agent's",
  ),
  keepPrevious: NO_KEEP_PREVIOUS,
  allowRegionChange: ALLOW_REGION_CHANGE,
  ...ROLLOUT_FLAGS,
  ...OUTPUT_FLAGS,
};

function rotateParIdentityOptions(v: CommandInput<typeof rotateParIdentityFlags>, io: Io) {
  return {
    ...configOptions(v),
    ...kubeOptions(v),
    ...agentOptions(v),
    ...credentialOptions(v),
    ...outputOptions(v, io),
    ...(v.create ? { create: true } : {}),
    ...rolloutOptions(v),
    ...agentChoiceOptions(v),
    timeoutSeconds: v.timeoutSeconds,
    dryRun: v.dryRun,
    verify: v.verify,
    keepPrevious: v.keepPrevious,
  };
}

/** What src/commands/rotate-par-identity.ts takes: its flags' options, the stop, and a program's keys. */
export type RotateParIdentityOptions = ReturnType<typeof rotateParIdentityOptions> & Stoppable & ProgramKeys;

export const rotateParIdentity = defineCommand({
  name: 'rotate-par-identity',
  stopsOnSignal: true,
  description:
    'enroll a new identity for the cluster agent and update the shared Kubernetes Secret (resourceVersion-guarded, previous kept)',
  flags: rotateParIdentityFlags,
  examples: [
    {
      what: "Rotate with the running cluster agent's own settings (no local config), checking RBAC first",
      command: 'par-identity rotate-par-identity --agent deployment/datadog-cluster-agent -n datadog --dry-run',
    },
    {
      what: 'Rotate the cluster agent identity Secret from a workstation, checking RBAC first',
      command:
        'par-identity rotate-par-identity --context prod -n datadog --dry-run && par-identity rotate-par-identity --context prod -n datadog',
    },
    {
      what: 'Rotate, then restart the cluster agent create-before-delete',
      command: 'par-identity rotate-par-identity -n datadog --rollout deployment/datadog-cluster-agent',
    },
  ],
  run: {
    load: () => import('../commands/rotate-par-identity.js'),
    toOptions: rotateParIdentityOptions,
  },
});
