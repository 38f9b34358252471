import type { Io } from '../io.js';
import { wantsColor } from '../output.js';
import { DEFAULT_CFGPATH, DEFAULT_PROFILE } from '../command-options.js';
import { ageThreshold, DURATIONS } from './duration-flags.js';
import type { FlagSpec, Raw } from './spec.js';
import { agentRefParser, agentVersionParser, workloadParser } from './value-parsers.js';

// Flag groups several commands share, and the option fields they map to.

export const cfgpathFlag = (help = 'agent config directory (or a .yaml file)'): FlagSpec => ({ flags: '-c, --cfgpath <dir>', option: 'cfgPath', help, default: DEFAULT_CFGPATH });
export const extraCfgFlag = (help = 'extra agent config file merged over the main one (repeatable)'): FlagSpec => ({
  flags: '-E, --extracfgpath <file>',
  option: 'extraCfg',
  help,
  default: [],
  repeatable: true,
});

export const CONFIG_FLAGS: FlagSpec[] = [
  cfgpathFlag(),
  extraCfgFlag(),
  { flags: '--identity-file <path>', help: 'identity file to use instead of the one the config points at' },
];

export const CLUSTER_CONFIG_FLAGS: FlagSpec[] = [cfgpathFlag('cluster agent config directory (datadog-cluster.yaml, else datadog.yaml)'), extraCfgFlag()];

export const AGENT_VERSION_FLAG: FlagSpec = {
  flags: '--agent-version <version>',
  help: "the agent's version (like 7.66.0+commit.abc1234) when it does not answer on its IPC API: X-Datadog-OnPrem-Version and the hostname's cluster_name rule",
  parse: agentVersionParser,
};

export const ENV_FROM_RUNNER_FLAG: FlagSpec = {
  flags: '--env-from-runner',
  help: "read the DD_* environment of the running runner process (root or the agent's user) instead of this shell's",
};

/** The cluster agent whose settings a run takes (docs/configuration.md, "The running agent's settings"). */
export const AGENT_FLAG: FlagSpec = {
  flags: '--agent <deployment/NAME>',
  option: 'agent',
  parse: agentRefParser,
  help: 'the cluster agent whose settings are used, deployment/NAME in -n (else the kubeconfig context\'s namespace); else it is found by its labels',
};

export const OVERRIDE_AGENT_SETTINGS_FLAG: FlagSpec = {
  flags: '--override-agent-settings',
  option: 'overrideAgentSettings',
  help: "go on when a local setting (-c, -E, DD_* in this shell) leads to another outcome than the running agent's; the output lists what was overridden",
};

export const ALLOW_REGION_CHANGE_FLAG: FlagSpec = {
  flags: '--allow-region-change',
  help: "enroll even when the site's region is not the region of the identity replaced (its URN); without it such a rotation stops before enrolling",
};

/** --override-agent-settings and --allow-region-change, as options (absent when not given). */
export function agentChoiceOptions(raw: Raw) {
  return { ...(raw.overrideAgentSettings ? { overrideAgentSettings: true } : {}), ...(raw.allowRegionChange ? { allowRegionChange: true } : {}) };
}

export const PROFILE_FLAG = (help: string): FlagSpec => ({ flags: '--profile <name>', help, default: DEFAULT_PROFILE });

export const CREDENTIAL_FLAGS: FlagSpec[] = [
  { flags: '--api-key-file <path>', help: 'read the API key from this file (- for stdin); never pass keys as flag values' },
  { flags: '--app-key-file <path>', help: 'read the application key from this file (- for stdin)' },
  PROFILE_FLAG('OS keychain profile used when no other source has a key (see `credentials set`)'),
  AGENT_VERSION_FLAG,
  { flags: '--no-connections', help: "do not create the runner's connections after enrolling (the agent creates them per actions_allowlist)" },
];

export const WAIT_LOCK_FLAG: FlagSpec = {
  flags: '--wait-lock <duration>',
  option: 'waitLockSeconds',
  help: "wait up to this long for another run's lock on the identity file (default 0: fail at once with LOCKED, exit 11); a Secret takes no lock file: a concurrent change to it is a CONFLICT",
  duration: DURATIONS.waitLock,
};

export const HOSTNAME_FLAG = (help: string): FlagSpec => ({ flags: '--hostname <name>', help });

export const KUBE_FLAGS: FlagSpec[] = [
  { flags: '--kubeconfig <path>', help: 'kubeconfig file (else KUBECONFIG, kubernetes_kubeconfig_path, the service account, ~/.kube/config)' },
  { flags: '--context <name>', help: 'kubeconfig context' },
  {
    flags: '-n, --namespace <ns>',
    help: "namespace of the identity Secret; else the cluster agent's is where the running agent reads it (its kube_resources_namespace, else its Pod's), never the context's, and a --k8s-secret the kubeconfig context's",
  },
  { flags: '--secret-name <name>', help: 'identity Secret name (else private_action_runner.identity_secret_name, private-action-runner-identity)' },
];

export const ROLLOUT_FLAGS: FlagSpec[] = [
  {
    flags: '--if-older-than <age>',
    option: 'ifOlderThanSeconds',
    help: 'rotate only when the identity in service is at least this old (90d, 12h, 30m); else exit 0 with status skipped',
    // An age, not a timer: beyond what a timer holds, so its own parser, within the same bounds.
    duration: DURATIONS.ifOlderThan,
    parse: ageThreshold,
  },
  WAIT_LOCK_FLAG,
  { flags: '--rollout <workload>', help: 'after the rotation, restart deployment/<name> or daemonset/<name> create-before-delete (see `rollout`)', parse: workloadParser('--rollout') },
  { flags: '--fallback', help: 'with --rollout: allow the DaemonSet capacity fallback' },
  { flags: '--rollout-timeout <duration>', option: 'rolloutTimeoutSeconds', help: 'deadline for --rollout', default: 600, duration: DURATIONS.rolloutTimeout },
];

/** The program's own flags, taken before or after the command (`par-identity --json status`). */
export const GLOBAL_FLAGS: FlagSpec[] = [
  { flags: '--json', help: 'print one JSON object on stdout (schemaVersion 1), usage errors included; human text goes to stderr', cliOnly: true },
  { flags: '--no-color', help: 'never colour the output (NO_COLOR is honoured too)', cliOnly: true },
  { flags: '-q, --quiet', help: 'stderr: only errors (no progress, no warnings); the result still prints', cliOnly: true },
  { flags: '-v, --verbose', help: 'stderr: also the detail the normal level leaves out (every progress line, every poll)', cliOnly: true },
];

export const OUTPUT_FLAGS: FlagSpec[] = [
  { flags: '--json', help: 'print one JSON object on stdout (schemaVersion 1); human text goes to stderr', cliOnly: true },
  { flags: '--no-color', help: 'never colour the output (NO_COLOR is honoured too)', cliOnly: true },
];

export function kubeOptions(raw: Raw) {
  const pick = (key: string) => (raw[key] ? { [key]: raw[key] as string } : {});
  return { ...pick('kubeconfig'), ...pick('context'), ...pick('namespace'), ...pick('secretName') };
}

/** --agent and --override-agent-settings: which cluster agent's settings a run takes, and whether a local one may win. */
export function agentOptions(raw: Raw) {
  return { ...(raw.agent ? { agent: raw.agent as string } : {}), ...(raw.overrideAgentSettings ? { overrideAgentSettings: true } : {}) };
}

export function rolloutOptions(raw: Raw) {
  return {
    ...(raw.rollout ? { rollout: raw.rollout as string } : {}),
    ...(raw.ifOlderThanSeconds !== undefined ? { ifOlderThanSeconds: raw.ifOlderThanSeconds as number } : {}),
    ...waitLockOptions(raw),
    fallback: Boolean(raw.fallback),
    rolloutTimeoutSeconds: raw.rolloutTimeoutSeconds as number,
  };
}

export function credentialOptions(raw: Raw) {
  return {
    ...(raw.apiKeyFile ? { apiKeyFile: raw.apiKeyFile as string } : {}),
    ...(raw.appKeyFile ? { appKeyFile: raw.appKeyFile as string } : {}),
    profile: raw.profile as string,
    ...(raw.agentVersion ? { agentVersion: raw.agentVersion as string } : {}),
    ...(raw.connections === false ? { connections: false } : {}),
  };
}

export function outputOptions(raw: Raw, io: Io) {
  return { json: Boolean(raw.json), color: wantsColor(io, raw.color === false) };
}

export function waitLockOptions(raw: Raw) {
  return raw.waitLockSeconds !== undefined ? { waitLockSeconds: raw.waitLockSeconds as number } : {};
}

/** -c and -E: where the agent config is read from, for every command that reads it. */
export function configOptions(raw: Raw) {
  // Which options were given (not defaulted): the CLI reads it from commander, the API from the call.
  const given = raw.givenOptions as string[] | undefined;
  const cfgPathGiven = given ? given.includes('cfgPath') : raw.cfgPath !== DEFAULT_CFGPATH;
  return { cfgPath: raw.cfgPath as string, extraCfg: raw.extraCfg as string[], cfgPathGiven };
}

export function localOptions(raw: Raw) {
  return {
    ...configOptions(raw),
    ...(raw.identityFile ? { identityFile: raw.identityFile as string } : {}),
    ...(raw.hostname ? { hostname: raw.hostname as string } : {}),
    ...(raw.agentVersion ? { agentVersion: raw.agentVersion as string } : {}),
    ...(raw.envFromRunner ? { envFromRunner: true } : {}),
  };
}
