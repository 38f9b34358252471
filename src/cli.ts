import { type Command, CommanderError, Option } from 'commander';
import { choiceParser, RedactingCommand } from './cli/redacting-command.js';
import { UsageError } from './errors.js';
import { type Io, processIo } from './io.js';
import { type CommandResult, renderError, renderResult, wantsColor } from './output.js';
import { DURATIONS, duration } from './cli/duration-flags.js';
import { VERSION } from './version.js';

// Wiring only: flags → options objects → commands/<name>.ts run(). Commands are imported when
// chosen, so `--help` never loads the Kubernetes client, undici or jose.

type Raw = Record<string, unknown>;
interface CommandModule<O> {
  run(options: O, io: Io): Promise<CommandResult>;
}

const DEFAULT_CFGPATH = '/etc/datadog-agent';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function processId(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`${flag} must be a process id, got a ${value.length}-character value`);
    return n;
  };
}

function addOutputFlags(cmd: Command): Command {
  return cmd.option('--json', 'print one JSON object on stdout (schemaVersion 1); human text goes to stderr').option('--no-color', 'never colour the output (NO_COLOR is honoured too)');
}

function addConfigFlags(cmd: Command): Command {
  return cmd
    .option('-c, --cfgpath <dir>', 'agent config directory (or a .yaml file)', DEFAULT_CFGPATH)
    .option('-E, --extracfgpath <file>', 'extra agent config file merged over the main one (repeatable)', collect, [])
    .option('--identity-file <path>', 'identity file to use instead of the one the config points at');
}

function addCredentialFlags(cmd: Command): Command {
  return cmd
    .option('--api-key-file <path>', 'read the API key from this file (- for stdin); never pass keys as flag values')
    .option('--app-key-file <path>', 'read the application key from this file (- for stdin)')
    .option('--profile <name>', 'OS keychain profile used when no other source has a key (see `credentials set`)', 'default');
}

function addKubeFlags(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <path>', 'kubeconfig file (else KUBECONFIG, kubernetes_kubeconfig_path, the service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <ns>', 'namespace of the identity Secret (else kube_resources_namespace, the service-account namespace, default)')
    .option('--secret-name <name>', 'identity Secret name (else private_action_runner.identity_secret_name, private-action-runner-identity)');
}

function kubeOptions(raw: Raw) {
  const pick = (key: string) => (raw[key] ? { [key]: raw[key] as string } : {});
  return { ...pick('kubeconfig'), ...pick('context'), ...pick('namespace'), ...pick('secretName') };
}

function addRolloutFlags(cmd: Command): Command {
  return cmd
    .option('--rollout <workload>', 'after the rotation, restart deployment/<name> or daemonset/<name> create-before-delete (see `rollout`)')
    .option('--fallback', 'with --rollout: allow the DaemonSet capacity fallback')
    .addOption(new Option('--rollout-timeout <duration>', 'deadline for --rollout').default(600).argParser(duration(DURATIONS.rolloutTimeout)));
}

function rolloutOptions(raw: Raw) {
  return {
    ...(raw.rollout ? { rollout: raw.rollout as string } : {}),
    fallback: Boolean(raw.fallback),
    rolloutTimeoutSeconds: raw.rolloutTimeout as number,
  };
}

function credentialOptions(raw: Raw) {
  return {
    ...(raw.apiKeyFile ? { apiKeyFile: raw.apiKeyFile as string } : {}),
    ...(raw.appKeyFile ? { appKeyFile: raw.appKeyFile as string } : {}),
    profile: raw.profile as string,
  };
}

function outputOptions(raw: Raw, io: Io) {
  return { json: Boolean(raw.json), color: wantsColor(io, raw.color === false) };
}

function localOptions(raw: Raw) {
  return {
    cfgPath: raw.cfgpath as string,
    extraCfg: raw.extracfgpath as string[],
    ...(raw.identityFile ? { identityFile: raw.identityFile as string } : {}),
  };
}

/** The one error boundary: a result is rendered, an error becomes output plus process.exitCode. */
function action<O>(io: Io, name: string, load: () => Promise<CommandModule<O>>, toOptions: (raw: Raw) => O) {
  return async (raw: Raw) => {
    const out = outputOptions(raw, io);
    try {
      const options = toOptions(raw);
      const result = await (await load()).run(options, io);
      renderResult(result, io, out);
    } catch (err) {
      process.exitCode = renderError(err, io, { ...out, command: name });
    }
  };
}

export function buildProgram(io: Io): Command {
  const program = new RedactingCommand('par-identity')
    .description('Rotate the identity (ECDSA P-256 key + runner URN) of a Datadog Private Action Runner, safely.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) })
    .exitOverride();

  const rotate = program
    .command('rotate-identity')
    .description('enroll a new runner identity and replace the local identity file atomically (standalone/node runner)');
  addConfigFlags(rotate);
  addCredentialFlags(rotate);
  rotate
    .addOption(new Option('--timeout <duration>', 'deadline for enrollment and verification').default(120).argParser(duration(DURATIONS.timeout)))
    .option('--dry-run', 'run every check and print every step; no enrollment, no write')
    .option('--no-verify', 'skip the signed health check of the new identity')
    .option('--k8s-secret <name>', 'rotate the Secret of a runner installed with the Helm chart (RUNNER_URN / RUNNER_PRIVATE_KEY) instead of a file')
    .option('-n, --namespace <ns>', 'namespace of --k8s-secret and --rollout')
    .option('--kubeconfig <path>', 'kubeconfig for --k8s-secret and --rollout')
    .option('--context <name>', 'kubeconfig context')
    .option('--no-keep-previous', 'with --k8s-secret: do not keep PREVIOUS_RUNNER_URN / PREVIOUS_RUNNER_PRIVATE_KEY');
  addRolloutFlags(rotate);
  addOutputFlags(rotate).action(
    action(io, 'rotate-identity', () => (rotate.opts().k8sSecret ? import('./commands/rotate-helm-secret.js') : import('./commands/rotate-identity.js')), (raw) => ({
      ...localOptions(raw),
      ...outputOptions(raw, io),
      ...credentialOptions(raw),
      ...kubeOptions(raw),
      ...rolloutOptions(raw),
      secretName: (raw.k8sSecret as string | undefined) ?? '',
      keepPrevious: raw.keepPrevious !== false,
      timeoutSeconds: raw.timeout as number,
      dryRun: Boolean(raw.dryRun),
      verify: raw.verify !== false,
    })),
  );

  const rotatePar = program
    .command('rotate-par-identity')
    .description("enroll a new identity for the cluster agent and update the shared Kubernetes Secret (resourceVersion-guarded, previous kept)");
  rotatePar
    .option('-c, --cfgpath <dir>', 'cluster agent config directory (datadog-cluster.yaml, else datadog.yaml)', DEFAULT_CFGPATH)
    .option('-E, --extracfgpath <file>', 'extra agent config file merged over the main one (repeatable)', collect, []);
  addKubeFlags(rotatePar);
  addCredentialFlags(rotatePar);
  rotatePar
    .addOption(new Option('--timeout <duration>', 'deadline for enrollment and verification').default(120).argParser(duration(DURATIONS.timeout)))
    .option('--dry-run', 'every read and the server-side dry-run update; no enrollment, no write')
    .option('--no-verify', 'skip the signed health check of the new identity')
    .option('--no-keep-previous', 'do not keep the previous identity as previous_urn / previous_private_key');
  addRolloutFlags(rotatePar);
  addOutputFlags(rotatePar).action(
    action(io, 'rotate-par-identity', () => import('./commands/rotate-par-identity.js'), (raw) => ({
      cfgPath: raw.cfgpath as string,
      extraCfg: raw.extracfgpath as string[],
      ...kubeOptions(raw),
      ...credentialOptions(raw),
      ...outputOptions(raw, io),
      ...rolloutOptions(raw),
      timeoutSeconds: raw.timeout as number,
      dryRun: Boolean(raw.dryRun),
      verify: raw.verify !== false,
      keepPrevious: raw.keepPrevious !== false,
    })),
  );

  const status = program.command('status').description('show where the identity is, what it is, and whether the agent would keep it');
  addConfigFlags(status);
  status.option('--secret', "show the cluster agent's identity Secret (current and previous) instead of the file");
  addKubeFlags(status);
  status
    .option('--verify', 'also prove online that the server accepts the identity (signed health check)')
    .addOption(new Option('--timeout <duration>', 'deadline for --verify').default(30).argParser(duration(DURATIONS.timeout)));
  addOutputFlags(status).action(
    action(io, 'status', () => (status.opts().secret ? import('./commands/secret-status.js') : import('./commands/status.js')), (raw) => ({
      ...localOptions(raw),
      ...kubeOptions(raw),
      ...outputOptions(raw, io),
      verify: Boolean(raw.verify),
      timeoutSeconds: raw.timeout as number,
    })),
  );

  const rollback = program.command('rollback').description('swap the backup identity (<file>.bak) back in atomically; the replaced one becomes the backup');
  addConfigFlags(rollback);
  rollback.option('--secret', "restore previous_* in the cluster agent's identity Secret instead of the file backup");
  addKubeFlags(rollback);
  rollback
    .option('--no-verify', 'skip the signed health check of the restored identity')
    .addOption(new Option('--timeout <duration>', 'deadline for verification').default(30).argParser(duration(DURATIONS.timeout)));
  addOutputFlags(rollback).action(
    action(io, 'rollback', () => (rollback.opts().secret ? import('./commands/secret-rollback.js') : import('./commands/rollback.js')), (raw) => ({
      ...localOptions(raw),
      ...kubeOptions(raw),
      ...outputOptions(raw, io),
      verify: raw.verify !== false,
      timeoutSeconds: raw.timeout as number,
    })),
  );

  const credentials = program
    .command('credentials')
    .description('store, show or delete the Datadog API/application keys in the OS keychain (Secret Service, macOS Keychain, Windows Credential Manager)')
    .argument('<action>', 'set | show | delete')
    .option('--profile <name>', 'keychain profile', 'default')
    .option('--site <site>', 'with set: also store the Datadog site')
    .option('-c, --cfgpath <dir>', 'with show: agent config whose keys take precedence', DEFAULT_CFGPATH)
    .option('-E, --extracfgpath <file>', 'with show: extra agent config file (repeatable)', collect, []);
  addOutputFlags(credentials).action(async (actionName: string, raw: Raw) =>
    action(io, ['set', 'show', 'delete'].includes(actionName) ? `credentials ${actionName}` : 'credentials', () => import('./commands/credentials.js'), (r) => {
      if (!["set", "show", "delete"].includes(actionName)) throw new UsageError(`unknown credentials action (a ${actionName.length}-character value)`, 'Use one of: set, show, delete.');
      return {
        ...outputOptions(r, io),
        action: actionName as 'set' | 'show' | 'delete',
        profile: r.profile as string,
        ...(r.site ? { site: r.site as string } : {}),
        cfgPath: r.cfgpath as string,
        extraCfg: r.extracfgpath as string[],
      };
    })(raw),
  );

  const rollout = program
    .command('rollout')
    .description('restart a Deployment or DaemonSet create-before-delete so every Pod runs the current identity; --check only reports')
    .argument('<workload>', 'deployment/<name> or daemonset/<name>')
    .option('-n, --namespace <ns>', 'namespace of the workload (else the service-account namespace, default)')
    .option('--kubeconfig <path>', 'kubeconfig file (else KUBECONFIG, the service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .option('--check', 'no writes: per workload and per node, can surge / needs fallback / blocked, with reasons')
    .option('--surge', 'require a create-before-delete restart (default: surge when safe)')
    .option('--no-surge', "restart with the workload's own strategy")
    .option('--fallback', 'DaemonSet: on a node too full for a second Pod, delete its old Pod first (within the maxUnavailable budget)')
    .option('--identity-secret <name>', 'Secret holding the identity whose fingerprint is stamped on the Pods')
    .addOption(new Option('--timeout <duration>', 'deadline for the rollout to complete').default(600).argParser(duration(DURATIONS.rolloutCommandTimeout)))
    .addOption(new Option('--poll-interval <ms>', 'how often progress is read').default(1000).argParser(duration(DURATIONS.pollInterval)))
    .option('--dry-run', 'print the patches and deletions it would make; no writes');
  addOutputFlags(rollout).action(async (target: string, raw: Raw) =>
    action(io, 'rollout', () => import('./commands/rollout.js'), (r) => ({
      ...outputOptions(r, io),
      target,
      ...kubeOptions(r),
      ...(r.identitySecret ? { identitySecret: r.identitySecret as string } : {}),
      checkOnly: Boolean(r.check),
      surge: rollout.getOptionValueSource('surge') === 'cli' ? (r.surge as boolean) : ('auto' as const),
      fallback: Boolean(r.fallback),
      timeoutSeconds: r.timeout as number,
      pollMs: r.pollInterval as number,
      dryRun: Boolean(r.dryRun),
    }))(raw),
  );

  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish) for every command and flag')
    .argument('<shell>', 'bash | zsh | fish')
    .action(async (shell: string, raw: Raw) =>
      action(io, 'completion', () => import('./commands/completion.js'), () => {
        if (!['bash', 'zsh', 'fish'].includes(shell)) throw new UsageError(`no completion for that shell (a ${shell.length}-character value)`, 'Use one of: bash, zsh, fish.');
        return { shell, program };
      })(raw),
    );

  const emulator = program.command('emulator').description('run the built-in Datadog enrollment API emulator (and, with --kube, the Kubernetes API emulator) until interrupted');
  emulator
    .option('--port <n>', 'enrollment emulator port (0 = any free port)', '0')
    .option('--kube', 'also start the Kubernetes API emulator')
    .option('--kube-port <n>', 'Kubernetes API emulator port', '0')
    .option('--kubeconfig-out <path>', 'write an admin kubeconfig for the Kubernetes API emulator here')
    .option('--simulate <nodes>', 'with --kube: simulate a cluster of that many nodes (scheduler, controllers, kubelets)', '0');
  addOutputFlags(emulator).action(
    action(io, 'emulator', () => import('./commands/emulator.js'), (raw) => ({
      ...outputOptions(raw, io),
      port: Number(raw.port),
      kube: Boolean(raw.kube),
      kubePort: Number(raw.kubePort),
      simulateNodes: Number(raw.simulate),
      ...(raw.kubeconfigOut ? { kubeconfigOut: raw.kubeconfigOut as string } : {}),
    })),
  );

  const watch = program
    .command('watch')
    .description('follow the identity Secret and hand every valid change on (file, signal, supervised command) until SIGTERM/SIGINT')
    .argument('[command...]', 'command to supervise, after --: started with PAR_IDENTITY_FILE set, restarted (or signalled) on every change; watch exits with its status');
  watch
    .option('-c, --cfgpath <dir>', 'cluster agent config directory (datadog-cluster.yaml, else datadog.yaml)', DEFAULT_CFGPATH)
    .option('-E, --extracfgpath <file>', 'extra agent config file merged over the main one (repeatable)', collect, []);
  addKubeFlags(watch);
  watch
    .option('--output <path>', 'keep this identity file up to date (atomic, 0600, previous kept as <path>.bak)')
    .addOption(new Option('--signal <pid>', 'after a rotation is written to --output, signal this process').argParser(processId('--signal')).conflicts('pidfile'))
    .option('--pidfile <file>', 'like --signal, for the process id held in this file (read at every signal)')
    .option('--signal-name <name>', 'signal sent by --signal/--pidfile and by --on-change signal', 'HUP')
    .addOption(new Option('--on-change <action>', 'what a rotation does to the supervised command').choices(['restart', 'signal']).argParser(choiceParser('--on-change', ['restart', 'signal'])).default('restart'))
    .addOption(new Option('--kill-timeout <seconds>', 'grace between SIGTERM and SIGKILL when the supervised command is stopped or restarted').default(10).argParser(duration(DURATIONS.killTimeout)))
    .addOption(new Option('--splay <ms>', 'wait a random 0…ms before applying a rotation, so replicas do not reload in lockstep').default(0).argParser(duration(DURATIONS.splay)))
    .addOption(new Option('--relist-interval <seconds>', 'full re-list period, the backstop for a silently dead watch (0: off)').default(600).argParser(duration(DURATIONS.relistInterval)))
    .option('--listen <addr>', 'serve /healthz, /readyz and /metrics on PORT, :PORT or HOST:PORT (off by default)')
    .addOption(new Option('--healthz-stale <seconds>', '/healthz fails after this long without a watch event or successful list (default: 2 × --relist-interval, at least 60)').argParser(duration(DURATIONS.healthzStale)));
  watch
    .option('--json', 'events as JSON lines on stdout (schemaVersion 1), then the result object; human text goes to stderr')
    .option('--no-color', 'never colour the output (NO_COLOR is honoured too)')
    .action((command: string[], raw: Raw) =>
    action(io, 'watch', () => import('./commands/watch.js'), (r) => ({
      cfgPath: r.cfgpath as string,
      extraCfg: r.extracfgpath as string[],
      ...kubeOptions(r),
      ...outputOptions(r, io),
      ...(r.output ? { output: r.output as string } : {}),
      ...(r.signal !== undefined ? { signalPid: r.signal as number } : {}),
      ...(r.pidfile ? { pidfile: r.pidfile as string } : {}),
      signalName: r.signalName as string,
      command,
      onChange: r.onChange as 'restart' | 'signal',
      killTimeoutSeconds: r.killTimeout as number,
      splayMs: r.splay as number,
      relistIntervalSeconds: r.relistInterval as number,
      ...(r.listen ? { listen: r.listen as string } : {}),
      ...(r.healthzStale !== undefined ? { healthzStaleSeconds: r.healthzStale as number } : {}),
    }))(raw),
  );

  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  const io = processIo();
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every other commander complaint is a usage error (exit 2).
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    process.exitCode = renderError(err, io, { json: argv.includes('--json'), color: wantsColor(io, false) });
  }
}

export async function renderManPage(): Promise<string> {
  const { renderManPage: render } = await import('./docs/man-page.js');
  return render(buildProgram(processIo()), VERSION);
}

/** README.md with its generated blocks rewritten (scripts/sync-readme.mjs). */
export async function syncReadme(readme: string): Promise<string> {
  const { syncReadme: sync } = await import('./docs/exit-status.js');
  return sync(readme);
}
