import type { Io } from '../io.js';
import { wantsColor } from '../output.js';
import { DEFAULT_CFGPATH, DEFAULT_PROFILE } from '../command-options.js';
import { ageThreshold, DURATIONS } from './duration-flags.js';
import { durationFlag, negationFlag, switchFlag, textFlag, textsFlag, withDefault } from './flag.js';
import type { RunContext } from './spec.js';
import { agentRefParser, agentVersionParser, workloadParser } from './value-parsers.js';

// Every flag more than one command has, declared once with one help text that is true for each of
// them (a default that differs per command is given where the command lists the flag: withDefault),
// the groups commands take together, and the option fields each group fills.

// ---- where the agent config and the identity are ----

const CFGPATH = withDefault(
  textFlag(
    '--cfgpath',
    'dir',
    "agent config directory (datadog.yaml; the cluster agent's datadog-cluster.yaml, else datadog.yaml), or a .yaml file",
    { short: '-c', completes: 'file' },
  ),
  DEFAULT_CFGPATH,
);
const EXTRA_CFG = textsFlag('--extracfgpath', 'file', 'extra agent config file merged over the main one (repeatable)', {
  short: '-E',
  completes: 'file',
});
const IDENTITY_FILE = textFlag('--identity-file', 'path', 'identity file to use instead of the one the config points at', {
  completes: 'file',
});
export const SECRET = switchFlag('--secret', "the cluster agent's identity Secret (current and previous_*) instead of the identity file");
export const K8S_SECRET = textFlag(
  '--k8s-secret',
  'name',
  'the Secret of a runner installed with the Helm chart (RUNNER_URN / RUNNER_PRIVATE_KEY, the previous as PREVIOUS_RUNNER_*) instead of the identity file',
);
export const HOSTNAME = textFlag(
  '--hostname',
  'name',
  'the hostname to store or compare with, instead of asking the running agent (IPC) or resolving it as the agent does',
);
export const AGENT_VERSION = textFlag(
  '--agent-version',
  'version',
  "the agent's version (like 7.66.0+commit.abc1234) when it does not answer on its IPC API: X-Datadog-OnPrem-Version and the hostname's cluster_name rule",
  {
    parse: agentVersionParser,
  },
);
export const ENV_FROM_RUNNER = switchFlag(
  '--env-from-runner',
  "read the DD_* environment of the running runner process (root or the agent's user) instead of this shell's",
);

/** -c and -E: which agent config a command reads. */
export const AGENT_CONFIG_FLAGS = { cfgPath: CFGPATH, extraCfg: EXTRA_CFG };
/** -c, -E and --identity-file: a command that reads the identity where the local agent keeps it. */
export const CONFIG_FLAGS = { ...AGENT_CONFIG_FLAGS, identityFile: IDENTITY_FILE };

// ---- the cluster ----

export const KUBECONFIG = textFlag(
  '--kubeconfig',
  'path',
  "kubeconfig file (else KUBECONFIG, the agent config's kubernetes_kubeconfig_path where the command reads one, the service account, ~/.kube/config)",
  {
    completes: 'file',
  },
);
export const CONTEXT = textFlag('--context', 'name', 'kubeconfig context', { completes: 'context' });
export const NAMESPACE = textFlag(
  '--namespace',
  'ns',
  "namespace of the identity Secret and of the workload (rollout's, --rollout's, --agent's); else the cluster agent's Secret is " +
    "where the running agent reads it (its kube_resources_namespace, else its Pod's), never the context's, and anything else is in the " +
    "kubeconfig context's namespace as kubectl picks it (the context's, the service account's, default)",
  { short: '-n', completes: 'namespace' },
);
const SECRET_NAME = textFlag(
  '--secret-name',
  'name',
  'identity Secret name (else private_action_runner.identity_secret_name, private-action-runner-identity)',
);

/** Which cluster, namespace and Secret: the commands that read the cluster agent's Secret. */
export const KUBE_FLAGS = { kubeconfig: KUBECONFIG, context: CONTEXT, namespace: NAMESPACE, secretName: SECRET_NAME };

/** The cluster agent whose settings a run takes (docs/configuration.md, "The running agent's settings"). */
const AGENT = textFlag(
  '--agent',
  'deployment/NAME',
  "the cluster agent whose settings are used, deployment/NAME in -n (else the kubeconfig context's namespace); else it is found by its labels",
  { parse: agentRefParser },
);
export const OVERRIDE_AGENT_SETTINGS = switchFlag(
  '--override-agent-settings',
  "go on when a local setting (-c, -E, DD_* in this shell) leads to another outcome than the running agent's; the output lists what was overridden",
);
export const ALLOW_REGION_CHANGE = switchFlag(
  '--allow-region-change',
  "enroll even when the site's region is not the region of the identity replaced (its URN); without it such a rotation stops before enrolling",
);

/** --agent and --override-agent-settings: which cluster agent's settings a run takes, and whether a local one may win. */
export const AGENT_FLAGS = { agent: AGENT, overrideAgentSettings: OVERRIDE_AGENT_SETTINGS };

// ---- keys ----

export const PROFILE = withDefault(
  textFlag(
    '--profile',
    'name',
    'OS keychain profile (what `credentials` stores, shows and deletes): the last source of the keys, and of the site when the ' +
      'environment and the config set neither a site nor an API key',
  ),
  DEFAULT_PROFILE,
);

export const CREDENTIAL_FLAGS = {
  apiKeyFile: textFlag('--api-key-file', 'path', 'read the API key from this file (- for stdin); never pass keys as flag values', {
    completes: 'file',
  }),
  appKeyFile: textFlag('--app-key-file', 'path', 'read the application key from this file (- for stdin)', { completes: 'file' }),
  profile: PROFILE,
  agentVersion: AGENT_VERSION,
  connections: negationFlag(
    '--no-connections',
    "do not create the runner's connections after enrolling (the agent creates them per actions_allowlist)",
  ),
};

// ---- how a run goes ----

/** Per command: its default and bounds (withDefault), the deadline of what the command does. */
export const TIMEOUT = durationFlag(
  '--timeout',
  "deadline of the whole command (every request, wait and verification; a rotation's --rollout has its own --rollout-timeout)",
  DURATIONS.timeout,
);
export const DRY_RUN = switchFlag(
  '--dry-run',
  'every read and check, with the server-side dry run of a Kubernetes write (RBAC, admission), printing every step and what it would ' +
    'change; no enrollment, no write',
);
export const NO_VERIFY = negationFlag('--no-verify', 'put the identity in service without proving it first (no signed health check)');
export const NO_KEEP_PREVIOUS = negationFlag(
  '--no-keep-previous',
  "in a Secret, do not keep the replaced identity (the cluster agent's previous_urn / previous_private_key, a Helm runner's " +
    'PREVIOUS_RUNNER_URN / PREVIOUS_RUNNER_PRIVATE_KEY); a file always keeps <file>.bak',
);
export const FALLBACK = switchFlag(
  '--fallback',
  'restarting a DaemonSet (rollout, --rollout): on a node too full for a second Pod, delete its old Pod first (within the maxUnavailable budget)',
);

export const WAIT_LOCK = durationFlag(
  '--wait-lock',
  "wait up to this long for another run's lock on the identity file (default 0: fail at once with LOCKED, exit 11); a Secret takes " +
    'no lock file: a concurrent change to it is a CONFLICT',
  DURATIONS.waitLock,
);

export const ROLLOUT_FLAGS = {
  // An age, not a timer: beyond what a timer holds, so its own parser, within the same bounds.
  ifOlderThanSeconds: durationFlag(
    '--if-older-than',
    'rotate only when the identity in service is at least this old (90d, 12h, 30m); else exit 0 with status skipped',
    DURATIONS.ifOlderThan,
    { value: 'age', parse: ageThreshold },
  ),
  waitLockSeconds: WAIT_LOCK,
  rollout: textFlag(
    '--rollout',
    'workload',
    'after the rotation, restart deployment/<name> or daemonset/<name> create-before-delete (see `rollout`)',
    { parse: workloadParser('--rollout') },
  ),
  fallback: FALLBACK,
  rolloutTimeoutSeconds: withDefault(durationFlag('--rollout-timeout', 'deadline for --rollout', DURATIONS.rolloutTimeout), 600),
};

// ---- output ----

const JSON_OUTPUT = switchFlag(
  '--json',
  'print JSON on stdout (schemaVersion 1): one object, usage errors included (watch: its events as lines, then that object); human text goes to stderr',
  { cliOnly: true },
);
const NO_COLOR = negationFlag('--no-color', 'never colour the output (NO_COLOR is honoured too)', { cliOnly: true });

/** --json and --no-color, which every command that prints a result takes after its name too. */
export const OUTPUT_FLAGS = { json: JSON_OUTPUT, color: NO_COLOR };

/** The program's own flags, taken before or after the command (`par-identity --json status`). */
export const GLOBAL_FLAGS = {
  ...OUTPUT_FLAGS,
  quiet: switchFlag('--quiet', 'stderr: only errors (no progress, no warnings); the result still prints', { short: '-q', cliOnly: true }),
  verbose: switchFlag('--verbose', 'stderr: also the detail the normal level leaves out (every progress line, every poll)', {
    short: '-v',
    cliOnly: true,
  }),
};

// ---- the option fields each group fills (absent when not given, as the commands expect) ----

// A computed key is typed as an index signature: the one place its single-key type is stated.
const given = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  value === undefined || value === '' ? {} : ({ [key]: value } as { [P in K]?: V });

export function kubeOptions(v: {
  kubeconfig: string | undefined;
  context: string | undefined;
  namespace: string | undefined;
  secretName?: string | undefined;
}) {
  return {
    ...given('kubeconfig', v.kubeconfig),
    ...given('context', v.context),
    ...given('namespace', v.namespace),
    ...given('secretName', v.secretName),
  };
}

export function agentOptions(v: { agent: string | undefined; overrideAgentSettings: boolean }) {
  return { ...given('agent', v.agent), ...(v.overrideAgentSettings ? { overrideAgentSettings: true } : {}) };
}

/** --override-agent-settings and --allow-region-change, as options (absent when not given). */
export function agentChoiceOptions(v: { overrideAgentSettings: boolean; allowRegionChange: boolean }) {
  return {
    ...(v.overrideAgentSettings ? { overrideAgentSettings: true } : {}),
    ...(v.allowRegionChange ? { allowRegionChange: true } : {}),
  };
}

export function waitLockOptions(v: { waitLockSeconds: number | undefined }) {
  return given('waitLockSeconds', v.waitLockSeconds);
}

export function rolloutOptions(v: {
  rollout: string | undefined;
  ifOlderThanSeconds: number | undefined;
  waitLockSeconds: number | undefined;
  fallback: boolean;
  rolloutTimeoutSeconds: number;
}) {
  return {
    ...given('rollout', v.rollout),
    ...given('ifOlderThanSeconds', v.ifOlderThanSeconds),
    ...waitLockOptions(v),
    fallback: v.fallback,
    rolloutTimeoutSeconds: v.rolloutTimeoutSeconds,
  };
}

export function credentialOptions(v: {
  apiKeyFile: string | undefined;
  appKeyFile: string | undefined;
  profile: string;
  agentVersion: string | undefined;
  connections: boolean;
}) {
  return {
    ...given('apiKeyFile', v.apiKeyFile),
    ...given('appKeyFile', v.appKeyFile),
    profile: v.profile,
    ...given('agentVersion', v.agentVersion),
    ...(v.connections ? {} : { connections: false }),
  };
}

export function outputOptions(v: Pick<RunContext, 'json' | 'color'>, io: Io) {
  return { json: v.json, color: wantsColor(io, !v.color) };
}

/** -c and -E: where the agent config is read from, for every command that reads it. */
export function configOptions(v: { cfgPath: string; extraCfg: string[]; givenOptions: readonly string[] }) {
  return { cfgPath: v.cfgPath, extraCfg: v.extraCfg, cfgPathGiven: v.givenOptions.includes('cfgPath') };
}

export function localOptions(
  v: Parameters<typeof configOptions>[0] & {
    identityFile: string | undefined;
    hostname?: string | undefined;
    agentVersion?: string | undefined;
    envFromRunner?: boolean;
  },
) {
  return {
    ...configOptions(v),
    ...given('identityFile', v.identityFile),
    ...given('hostname', v.hostname),
    ...given('agentVersion', v.agentVersion),
    ...(v.envFromRunner ? { envFromRunner: true } : {}),
  };
}
