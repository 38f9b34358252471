import type { Io } from '../io.js';
import { switchFlag, textOrTrueFlag, withDefault } from './flag.js';
import {
  AGENT_FLAGS,
  AGENT_VERSION,
  agentOptions,
  CONFIG_FLAGS,
  DRY_RUN,
  ENV_FROM_RUNNER,
  HOSTNAME,
  K8S_SECRET,
  KUBE_FLAGS,
  kubeOptions,
  localOptions,
  NO_VERIFY,
  OUTPUT_FLAGS,
  outputOptions,
  PROFILE,
  SECRET,
  TIMEOUT,
  WAIT_LOCK,
  waitLockOptions,
} from './shared-flags.js';
import { type CommandInput, defineCommand, type Stoppable } from './spec.js';
import { workloadParser } from './value-parsers.js';

// Looking at the identity in place, and putting the previous one back. As in rotation-commands.ts,
// each command's options type is what its toOptions builds (declared apart from the defineCommand
// literal, so the command module names it with `import type`).

const statusFlags = {
  ...CONFIG_FLAGS,
  secret: SECRET,
  k8sSecret: K8S_SECRET,
  allNamespaces: switchFlag(
    '--all-namespaces',
    'list every identity Secret (cluster agent and Helm layouts) the token can read, one row each',
    { short: '-A' },
  ),
  pods: textOrTrueFlag(
    '--pods',
    'workload',
    'which Pod of the workload (default deployment/datadog-cluster-agent) runs which identity, and whether the previous runner can be removed',
    workloadParser('--pods'),
  ),
  hostname: HOSTNAME,
  agentVersion: AGENT_VERSION,
  envFromRunner: ENV_FROM_RUNNER,
  ...KUBE_FLAGS,
  ...AGENT_FLAGS,
  verify: switchFlag('--verify', 'also prove online that the server accepts the identity (signed health check)'),
  profile: PROFILE,
  timeoutSeconds: withDefault(TIMEOUT, 30),
  ...OUTPUT_FLAGS,
};

/** What status and rollback both read: which identity (file or Secret), where, and how it is proven. */
function identityReadOptions(
  v: Parameters<typeof localOptions>[0] &
    Parameters<typeof kubeOptions>[0] &
    Parameters<typeof agentOptions>[0] &
    Parameters<typeof outputOptions>[0] & {
      secret: boolean;
      k8sSecret: string | undefined;
      verify: boolean;
      profile: string | undefined;
      timeoutSeconds: number;
    },
  io: Io,
) {
  return {
    secret: v.secret,
    ...(v.k8sSecret ? { k8sSecret: v.k8sSecret } : {}),
    ...localOptions(v),
    ...kubeOptions(v),
    ...agentOptions(v),
    ...outputOptions(v, io),
    verify: v.verify,
    profile: v.profile,
    timeoutSeconds: v.timeoutSeconds,
  };
}

function statusOptions(v: CommandInput<typeof statusFlags>, io: Io) {
  return {
    ...identityReadOptions(v, io),
    ...(v.allNamespaces ? { allNamespaces: true } : {}),
    ...(v.pods ? { pods: v.pods } : {}),
  };
}

/** What src/commands/status.ts takes: its flags' options (the pipeline's InspectInput, and the fleet views' choice). */
export type StatusOptions = ReturnType<typeof statusOptions>;

export const status = defineCommand({
  name: 'status',
  description: 'show where the identity is, what it is, and whether the agent would keep it',
  flags: statusFlags,
  examples: [
    { what: 'Show the local identity and prove the server accepts it', command: 'par-identity status --verify' },
    { what: 'Show both identities kept in the Secret', command: 'par-identity status --secret -n datadog' },
  ],
  run: {
    load: () => import('../commands/status.js'),
    toOptions: statusOptions,
  },
});

const rollbackFlags = {
  ...CONFIG_FLAGS,
  secret: SECRET,
  k8sSecret: K8S_SECRET,
  waitLockSeconds: WAIT_LOCK,
  ...KUBE_FLAGS,
  ...AGENT_FLAGS,
  verify: NO_VERIFY,
  profile: PROFILE,
  timeoutSeconds: withDefault(TIMEOUT, 30),
  dryRun: DRY_RUN,
  ...OUTPUT_FLAGS,
};

function rollbackOptions(v: CommandInput<typeof rollbackFlags>, io: Io) {
  return { ...identityReadOptions(v, io), ...waitLockOptions(v), dryRun: v.dryRun };
}

/** What src/commands/rollback.ts takes: its flags' options and the stop (the pipeline's RollbackInput). */
export type RollbackOptions = ReturnType<typeof rollbackOptions> & Stoppable;

export const rollback = defineCommand({
  name: 'rollback',
  stopsOnSignal: true,
  description:
    "swap the previous identity back in atomically (the file's <file>.bak; with --secret or --k8s-secret, the Secret's previous " +
    'keys); the replaced one becomes the previous',
  flags: rollbackFlags,
  examples: [
    { what: 'Undo the last rotation', command: 'par-identity rollback' },
    {
      what: 'See what a rollback of the Helm runner Secret would do, checking RBAC first',
      command: 'par-identity rollback --k8s-secret runner -n ops --dry-run',
    },
    { what: "Restore the previous identity kept in the cluster agent's Secret", command: 'par-identity rollback --secret -n datadog' },
  ],
  run: {
    load: () => import('../commands/rollback.js'),
    toOptions: rollbackOptions,
  },
});
