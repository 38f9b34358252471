import type { RollbackOptions } from '../commands/rollback.js';
import type { StatusOptions } from '../rotation/options.js';
import { DURATIONS } from './duration-flags.js';
import { AGENT_FLAG, AGENT_VERSION_FLAG, agentChoiceOptions, agentOptions, CONFIG_FLAGS, ENV_FROM_RUNNER_FLAG, HOSTNAME_FLAG, KUBE_FLAGS, kubeOptions, localOptions, OUTPUT_FLAGS, outputOptions, OVERRIDE_AGENT_SETTINGS_FLAG, PROFILE_FLAG, WAIT_LOCK_FLAG, waitLockOptions } from './shared-flags.js';
import type { CommandSpec } from './spec.js';
import { workloadParser } from './value-parsers.js';

// Looking at the identity in place, and putting the previous one back.

export const status: CommandSpec<StatusOptions> = {
  name: 'status',
  description: 'show where the identity is, what it is, and whether the agent would keep it',
  flags: [
    ...CONFIG_FLAGS,
    { flags: '--secret', help: "show the cluster agent's identity Secret (current and previous) instead of the file" },
    { flags: '--k8s-secret <name>', help: 'show the Secret of a runner installed with the Helm chart (RUNNER_URN / RUNNER_PRIVATE_KEY) instead of the file' },
    { flags: '-A, --all-namespaces', help: 'list every identity Secret (cluster agent and Helm layouts) the token can read, one row each' },
    { flags: '--pods [workload]', help: 'which Pod of the workload (default deployment/datadog-cluster-agent) runs which identity, and whether the previous runner can be removed', parse: workloadParser('--pods') },
    HOSTNAME_FLAG('compare with this hostname instead of asking the running agent (IPC) or resolving it as the agent does'),
    AGENT_VERSION_FLAG,
    ENV_FROM_RUNNER_FLAG,
    ...KUBE_FLAGS,
    AGENT_FLAG,
    OVERRIDE_AGENT_SETTINGS_FLAG,
    { flags: '--verify', help: 'also prove online that the server accepts the identity (signed health check)' },
    PROFILE_FLAG('with --verify: keychain profile whose stored site is used when the environment and the config set no site and no API key'),
    { flags: '--timeout <duration>', option: 'timeoutSeconds', help: 'deadline for --verify', default: 30, duration: DURATIONS.timeout },
    ...OUTPUT_FLAGS,
  ],
  examples: [
    { what: 'Show the local identity and prove the server accepts it', command: 'par-identity status --verify' },
    { what: 'Show both identities kept in the Secret', command: 'par-identity status --secret -n datadog' },
  ],
  run: {
    load: () => import('../commands/status.js'),
    toOptions: (raw, io) => ({
      secret: Boolean(raw.secret),
      ...(raw.k8sSecret ? { k8sSecret: raw.k8sSecret as string } : {}),
      ...(raw.allNamespaces ? { allNamespaces: true } : {}),
      ...(raw.pods ? { pods: raw.pods as string | true } : {}),
      ...localOptions(raw),
      ...kubeOptions(raw),
      ...agentOptions(raw),
      ...outputOptions(raw, io),
      verify: Boolean(raw.verify),
      profile: raw.profile as string,
      timeoutSeconds: raw.timeoutSeconds as number,
    }),
  },
};

export const rollback: CommandSpec<RollbackOptions> = {
  name: 'rollback',
  stopsOnSignal: true,
  description: "swap the previous identity back in atomically (the file's <file>.bak; with --secret or --k8s-secret, the Secret's previous keys); the replaced one becomes the previous",
  flags: [
    ...CONFIG_FLAGS,
    { flags: '--secret', help: "restore previous_* in the cluster agent's identity Secret instead of the file backup" },
    { flags: '--k8s-secret <name>', help: 'restore PREVIOUS_RUNNER_* in the Helm runner Secret instead of the file backup' },
    WAIT_LOCK_FLAG,
    ...KUBE_FLAGS,
    AGENT_FLAG,
    OVERRIDE_AGENT_SETTINGS_FLAG,
    { flags: '--no-verify', help: 'restore the previous identity without proving it first (no signed health check)' },
    PROFILE_FLAG('keychain profile whose stored site the health check uses when the environment and the config set no site and no API key'),
    { flags: '--timeout <duration>', option: 'timeoutSeconds', help: 'deadline for verification', default: 30, duration: DURATIONS.timeout },
    { flags: '--dry-run', help: 'every read and check (the backup decodes; for a Secret, the server-side dry run of the update) and print every step; no write' },
    ...OUTPUT_FLAGS,
  ],
  examples: [
    { what: 'Undo the last rotation', command: 'par-identity rollback' },
    { what: 'See what a rollback of the Helm runner Secret would do, checking RBAC first', command: 'par-identity rollback --k8s-secret runner -n ops --dry-run' },
    { what: "Restore the previous identity kept in the cluster agent's Secret", command: 'par-identity rollback --secret -n datadog' },
  ],
  run: {
    load: () => import('../commands/rollback.js'),
    toOptions: (raw, io) => ({
      secret: Boolean(raw.secret),
      ...(raw.k8sSecret ? { k8sSecret: raw.k8sSecret as string } : {}),
      ...waitLockOptions(raw),
      ...localOptions(raw),
      ...kubeOptions(raw),
      ...agentOptions(raw),
      ...outputOptions(raw, io),
      verify: raw.verify !== false,
      profile: raw.profile as string,
      timeoutSeconds: raw.timeoutSeconds as number,
      dryRun: Boolean(raw.dryRun),
      ...agentChoiceOptions(raw),
    }),
  },
};
