import type { Io } from '../io.js';
import type { RolloutRequest } from '../rollout/rollout-workload.js';
import { DURATIONS } from './duration-flags.js';
import { choiceFlag, countFlag, durationFlag, switchFlag, textFlag, tristateFlag, withDefault } from './flag.js';
import {
  AGENT_FLAGS,
  agentOptions,
  AGENT_CONFIG_FLAGS,
  CONTEXT,
  configOptions,
  DRY_RUN,
  FALLBACK,
  KUBE_FLAGS,
  KUBECONFIG,
  kubeOptions,
  NAMESPACE,
  OUTPUT_FLAGS,
  outputOptions,
  TIMEOUT,
} from './shared-flags.js';
import { argument, type CommandInput, defineCommand, type Stoppable, variadicArgument } from './spec.js';
import { listenParser, processIdParser, signalNameParser } from './value-parsers.js';

// Commands that act on the cluster's workloads: restart them, or follow the Secret from inside a Pod.
// As in rotation-commands.ts, each command's options type is what its toOptions builds (declared apart
// from the defineCommand literal, so the command module names it with `import type`).

const rolloutCommandArguments = { workload: argument('<workload>', 'deployment/<name> or daemonset/<name>') };

const rolloutCommandFlags = {
  namespace: NAMESPACE,
  kubeconfig: KUBECONFIG,
  context: CONTEXT,
  checkOnly: switchFlag('--check', 'no writes: per workload and per node, can surge / needs fallback / blocked, with reasons'),
  surge: tristateFlag(
    '--surge',
    'require a create-before-delete restart (default: surge when safe)',
    "restart with the workload's own strategy",
  ),
  fallback: FALLBACK,
  identitySecret: textFlag('--identity-secret', 'name', 'Secret holding the identity whose fingerprint is stamped on the Pods'),
  // A rollout of a large DaemonSet can take hours: its own default and bounds.
  timeoutSeconds: withDefault(TIMEOUT, 600, DURATIONS.rolloutCommandTimeout),
  pollMs: withDefault(durationFlag('--poll-interval', 'how often progress is read', DURATIONS.pollInterval), 1000),
  dryRun: DRY_RUN,
  ...OUTPUT_FLAGS,
};

/** --surge and --no-surge share one option with no default: undefined means neither was given, 'auto' (surge when safe). */
function surgeChoice(given: boolean | undefined): RolloutRequest['surge'] {
  return given ?? 'auto';
}

function rolloutCommandOptions(v: CommandInput<typeof rolloutCommandFlags, typeof rolloutCommandArguments>, io: Io) {
  return {
    ...outputOptions(v, io),
    target: v.workload,
    ...kubeOptions(v),
    ...(v.identitySecret ? { identitySecret: v.identitySecret } : {}),
    checkOnly: v.checkOnly,
    surge: surgeChoice(v.surge),
    fallback: v.fallback,
    timeoutSeconds: v.timeoutSeconds,
    pollMs: v.pollMs,
    dryRun: v.dryRun,
  };
}

/** What src/commands/rollout.ts takes: its argument's and flags' options (the rollout's RolloutRequest) and the stop. */
export type RolloutCommandOptions = ReturnType<typeof rolloutCommandOptions> & Stoppable;

export const rollout = defineCommand({
  name: 'rollout',
  stopsOnSignal: true,
  description: 'restart a Deployment or DaemonSet create-before-delete so every Pod runs the current identity; --check only reports',
  arguments: rolloutCommandArguments,
  flags: rolloutCommandFlags,
  examples: [
    {
      what: 'See whether a restart can surge on every node, without changing anything',
      command: 'par-identity rollout daemonset/datadog-agent -n datadog --check',
    },
    {
      what: 'Restart the cluster agent so every Pod runs the current identity',
      command: 'par-identity rollout deployment/datadog-cluster-agent -n datadog --timeout 15m',
    },
  ],
  run: {
    load: () => import('../commands/rollout.js'),
    toOptions: rolloutCommandOptions,
  },
});

const watchCommandArguments = {
  command: variadicArgument(
    '[command...]',
    'command to supervise, after --: started with PAR_IDENTITY_FILE set, restarted (or signalled) on every change; watch exits with its status',
  ),
};

const watchCommandFlags = {
  ...AGENT_CONFIG_FLAGS,
  ...KUBE_FLAGS,
  ...AGENT_FLAGS,
  output: textFlag('--output', 'path', 'keep this identity file up to date (atomic, 0600, previous kept as <path>.bak)', {
    completes: 'file',
  }),
  signalPid: {
    ...countFlag('--signal', 'pid', 'after a rotation is written to --output, signal this process', processIdParser('--signal')),
    conflicts: 'pidfile',
  },
  pidfile: textFlag('--pidfile', 'file', 'like --signal, for the process id held in this file (read at every signal)', {
    completes: 'file',
  }),
  signalName: withDefault(
    textFlag('--signal-name', 'name', 'signal sent by --signal/--pidfile and by --on-change signal', { parse: signalNameParser }),
    'HUP',
  ),
  onChange: withDefault(
    choiceFlag('--on-change', 'action', 'what a rotation does to the supervised command', ['restart', 'signal']),
    'restart',
  ),
  killTimeoutSeconds: withDefault(
    durationFlag(
      '--kill-timeout',
      'grace between SIGTERM and SIGKILL when the supervised command is stopped or restarted',
      DURATIONS.killTimeout,
    ),
    10,
  ),
  splayMs: withDefault(
    durationFlag(
      '--splay',
      'wait a random time up to this long before applying a rotation, so replicas do not reload in lockstep',
      DURATIONS.splay,
    ),
    0,
  ),
  relistIntervalSeconds: withDefault(
    durationFlag('--relist-interval', 'full re-list period, the backstop for a silently dead watch (0: off)', DURATIONS.relistInterval),
    600,
  ),
  listen: textFlag(
    '--listen',
    'addr',
    'serve /healthz, /readyz and /metrics on :PORT (every interface, what probes need) or 127.0.0.1:PORT (this host only); off by default',
    { parse: listenParser },
  ),
  healthzStaleSeconds: durationFlag(
    '--healthz-stale',
    '/healthz fails after this long without a watch event or successful list (default: 2 × --relist-interval, at least 1m)',
    DURATIONS.healthzStale,
  ),
  ...OUTPUT_FLAGS,
};

function watchCommandOptions(v: CommandInput<typeof watchCommandFlags, typeof watchCommandArguments>, io: Io) {
  return {
    ...configOptions(v),
    ...kubeOptions(v),
    ...agentOptions(v),
    ...outputOptions(v, io),
    ...(v.output ? { output: v.output } : {}),
    ...(v.signalPid !== undefined ? { signalPid: v.signalPid } : {}),
    ...(v.pidfile ? { pidfile: v.pidfile } : {}),
    signalName: v.signalName,
    command: v.command,
    onChange: v.onChange,
    killTimeoutSeconds: v.killTimeoutSeconds,
    splayMs: v.splayMs,
    relistIntervalSeconds: v.relistIntervalSeconds,
    ...(v.listen ? { listen: v.listen } : {}),
    ...(v.healthzStaleSeconds !== undefined ? { healthzStaleSeconds: v.healthzStaleSeconds } : {}),
  };
}

/** What src/commands/watch.ts takes: its arguments' and flags' options, which runWatch checks against WatchOptions (src/watch/watch-options.ts). */
export type WatchCommandOptions = ReturnType<typeof watchCommandOptions>;

export const watch = defineCommand({
  name: 'watch',
  description: 'follow the identity Secret and hand every valid change on (file, signal, supervised command) until SIGTERM/SIGINT',
  arguments: watchCommandArguments,
  flags: watchCommandFlags,
  examples: [
    {
      what: 'In the runner Pod: keep a file up to date and tell the runner to reload',
      command: 'par-identity watch --output /etc/par/identity.json --pidfile /run/runner.pid',
    },
    {
      what: 'Supervise the runner, restarting it on every rotation, with health endpoints',
      command: 'par-identity watch --listen :9090 -- /usr/bin/runner --config /etc/runner.yaml',
    },
  ],
  run: {
    load: () => import('../commands/watch.js'),
    toOptions: watchCommandOptions,
  },
});
