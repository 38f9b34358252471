import type { RolloutCommandOptions } from '../commands/rollout.js';
import type { WatchOptions } from '../watch/watch-options.js';
import { DURATIONS } from './duration-flags.js';
import { AGENT_FLAG, agentOptions, CLUSTER_CONFIG_FLAGS, configOptions, KUBE_FLAGS, kubeOptions, OUTPUT_FLAGS, OVERRIDE_AGENT_SETTINGS_FLAG, outputOptions } from './shared-flags.js';
import type { CommandSpec } from './spec.js';
import { listenParser, processIdParser, signalNameParser } from './value-parsers.js';

// Commands that act on the cluster's workloads: restart them, or follow the Secret from inside a Pod.

export const rollout: CommandSpec<RolloutCommandOptions> = {
  name: 'rollout',
  stopsOnSignal: true,
  description: 'restart a Deployment or DaemonSet create-before-delete so every Pod runs the current identity; --check only reports',
  arguments: [{ name: '<workload>', help: 'deployment/<name> or daemonset/<name>' }],
  flags: [
    { flags: '-n, --namespace <ns>', help: "namespace of the workload (else, as kubectl: the kubeconfig context's, the service-account namespace, default)" },
    { flags: '--kubeconfig <path>', help: 'kubeconfig file (else KUBECONFIG, the service account, ~/.kube/config)' },
    { flags: '--context <name>', help: 'kubeconfig context' },
    { flags: '--check', option: 'checkOnly', help: 'no writes: per workload and per node, can surge / needs fallback / blocked, with reasons' },
    { flags: '--surge', help: 'require a create-before-delete restart (default: surge when safe)' },
    { flags: '--no-surge', help: "restart with the workload's own strategy" },
    { flags: '--fallback', help: 'DaemonSet: on a node too full for a second Pod, delete its old Pod first (within the maxUnavailable budget)' },
    { flags: '--identity-secret <name>', help: 'Secret holding the identity whose fingerprint is stamped on the Pods' },
    { flags: '--timeout <duration>', option: 'timeoutSeconds', help: 'deadline for the rollout to complete', default: 600, duration: DURATIONS.rolloutCommandTimeout },
    { flags: '--poll-interval <duration>', option: 'pollMs', help: 'how often progress is read', default: 1000, duration: DURATIONS.pollInterval },
    { flags: '--dry-run', help: 'the checks, then the server-side dry run of the first patch (RBAC, admission), and print the patches it would make; no writes' },
    ...OUTPUT_FLAGS,
  ],
  examples: [
    { what: 'See whether a restart can surge on every node, without changing anything', command: 'par-identity rollout daemonset/datadog-agent -n datadog --check' },
    { what: 'Restart the cluster agent so every Pod runs the current identity', command: 'par-identity rollout deployment/datadog-cluster-agent -n datadog --timeout 15m' },
  ],
  run: {
    load: () => import('../commands/rollout.js'),
    toOptions: (raw, io) => ({
      ...outputOptions(raw, io),
      target: raw.workload as string,
      ...kubeOptions(raw),
      ...(raw.identitySecret ? { identitySecret: raw.identitySecret as string } : {}),
      checkOnly: Boolean(raw.checkOnly),
      // --surge and --no-surge share one key with no default: undefined means neither was given.
      surge: raw.surge === undefined ? ('auto' as const) : (raw.surge as boolean),
      fallback: Boolean(raw.fallback),
      timeoutSeconds: raw.timeoutSeconds as number,
      pollMs: raw.pollMs as number,
      dryRun: Boolean(raw.dryRun),
    }),
  },
};

export const watch: CommandSpec<WatchOptions> = {
  name: 'watch',
  description: 'follow the identity Secret and hand every valid change on (file, signal, supervised command) until SIGTERM/SIGINT',
  arguments: [
    {
      name: '[command...]',
      help: 'command to supervise, after --: started with PAR_IDENTITY_FILE set, restarted (or signalled) on every change; watch exits with its status',
    },
  ],
  flags: [
    ...CLUSTER_CONFIG_FLAGS,
    ...KUBE_FLAGS,
    AGENT_FLAG,
    OVERRIDE_AGENT_SETTINGS_FLAG,
    { flags: '--output <path>', help: 'keep this identity file up to date (atomic, 0600, previous kept as <path>.bak)' },
    { flags: '--signal <pid>', option: 'signalPid', help: 'after a rotation is written to --output, signal this process', parse: processIdParser('--signal'), conflicts: 'pidfile' },
    { flags: '--pidfile <file>', help: 'like --signal, for the process id held in this file (read at every signal)' },
    { flags: '--signal-name <name>', help: 'signal sent by --signal/--pidfile and by --on-change signal', default: 'HUP', parse: signalNameParser },
    { flags: '--on-change <action>', help: 'what a rotation does to the supervised command', choices: ['restart', 'signal'], default: 'restart' },
    { flags: '--kill-timeout <duration>', option: 'killTimeoutSeconds', help: 'grace between SIGTERM and SIGKILL when the supervised command is stopped or restarted', default: 10, duration: DURATIONS.killTimeout },
    { flags: '--splay <duration>', option: 'splayMs', help: 'wait a random time up to this long before applying a rotation, so replicas do not reload in lockstep', default: 0, duration: DURATIONS.splay },
    { flags: '--relist-interval <duration>', option: 'relistIntervalSeconds', help: 'full re-list period, the backstop for a silently dead watch (0: off)', default: 600, duration: DURATIONS.relistInterval },
    { flags: '--listen <addr>', help: 'serve /healthz, /readyz and /metrics on :PORT (every interface, what probes need) or 127.0.0.1:PORT (this host only); off by default', parse: listenParser },
    {
      flags: '--healthz-stale <duration>',
      option: 'healthzStaleSeconds',
      help: '/healthz fails after this long without a watch event or successful list (default: 2 × --relist-interval, at least 1m)',
      duration: DURATIONS.healthzStale,
    },
    { flags: '--json', help: 'events as JSON lines on stdout (schemaVersion 1), then the result object; human text goes to stderr' },
    { flags: '--no-color', help: 'never colour the output (NO_COLOR is honoured too)' },
  ],
  examples: [
    { what: 'In the runner Pod: keep a file up to date and tell the runner to reload', command: 'par-identity watch --output /etc/par/identity.json --pidfile /run/runner.pid' },
    { what: 'Supervise the runner, restarting it on every rotation, with health endpoints', command: 'par-identity watch --listen :9090 -- /usr/bin/runner --config /etc/runner.yaml' },
  ],
  run: {
    load: () => import('../commands/watch.js'),
    toOptions: (raw, io) => ({
      ...configOptions(raw),
      ...kubeOptions(raw),
      ...agentOptions(raw),
      ...outputOptions(raw, io),
      ...(raw.output ? { output: raw.output as string } : {}),
      ...(raw.signalPid !== undefined ? { signalPid: raw.signalPid as number } : {}),
      ...(raw.pidfile ? { pidfile: raw.pidfile as string } : {}),
      signalName: raw.signalName as string,
      command: raw.command as string[],
      onChange: raw.onChange as 'restart' | 'signal',
      killTimeoutSeconds: raw.killTimeoutSeconds as number,
      splayMs: raw.splayMs as number,
      relistIntervalSeconds: raw.relistIntervalSeconds as number,
      ...(raw.listen ? { listen: raw.listen as string } : {}),
      ...(raw.healthzStaleSeconds !== undefined ? { healthzStaleSeconds: raw.healthzStaleSeconds as number } : {}),
    }),
  },
};
