import { type Flag, helpLines } from '../flag.js';
import type { ArgumentSpec, CommandSpec, ProgramSpec } from '../spec.js';
import { CONFIG_KEYS, envNameOf } from '../../config/config-keys.js';
import { shownDefault } from '../duration-flags.js';
import { exitStatusDocs } from './exit-status.js';

// The man page is rendered from the command table that also builds --help and the completion,
// plus the config-key and exit-code tables the code itself uses: nothing here can drift from behaviour.

// Non-ASCII characters become \[uXXXX] escapes: groff -ww warns on raw UTF-8 input.
const esc = (text: string) =>
  text
    .replace(/\\/g, '\\e')
    .replace(/^([.'])/gm, '\\&$1')
    .replace(/-/g, '\\-')
    .replace(/[^\x00-\x7f]/gu, (ch) => `\\[u${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);

const HELP_LINES = ['.TP', `.B ${esc('-h, --help')}`, esc('show help for a command')];

function flagLines(flag: Flag): string[] {
  const def = flag.default !== undefined && !(Array.isArray(flag.default) && flag.default.length === 0);
  const choices = flag.choices ? ` (choices: ${flag.choices.join(', ')})` : '';
  // A tristate's default is neither form: only the first line says what happens without both.
  return helpLines(flag).flatMap((line, i) => [
    '.TP',
    `.B ${esc(line.syntax)}`,
    esc(`${line.help}${i === 0 ? choices : ''}${def && i === 0 ? ` (default: ${shownDefault(flag)})` : ''}`),
  ]);
}

const argumentLines = (arg: ArgumentSpec) => ['.TP', `.I ${esc(arg.name)}`, esc(arg.help)];

function commandSection(cmd: CommandSpec): string[] {
  const args = Object.values(cmd.arguments ?? {});
  return [
    `.SS ${esc(cmd.name)}`,
    `.B par\\-identity ${esc(cmd.name)}`,
    esc(['[options]', ...args.map((a) => a.name)].join(' ')),
    '.PP',
    esc(cmd.description),
    ...args.flatMap(argumentLines),
    // The same flags as --help, help flag included.
    ...Object.values(cmd.flags).flatMap(flagLines),
    ...HELP_LINES,
  ];
}

/** The programmatic API (src/api.ts), one line each: the CLI command it runs and what it answers. */
const API_FUNCTIONS = [
  { signature: 'rotateIdentity(options)', what: 'rotate-identity: resolves with the --json result (RotationResult).' },
  { signature: 'rotateParIdentity(options)', what: 'rotate-par-identity: resolves with the --json result (RotationResult).' },
  { signature: 'status(options)', what: 'status: resolves with the --json result (StatusResult).' },
  {
    signature: 'watchIdentity(options)',
    what:
      'watch without the supervision: resolves with a handle (ready, current(), events, onLoaded/onWritten/onError callbacks, metrics, ' +
      'stop()) that keeps the last valid identity of the Secret, and with output the identity file, up to date.',
  },
];

const exampleLines = (cmd: CommandSpec) =>
  cmd.examples.flatMap((e) => ['.PP', esc(`${e.what}:`), '.RS', '.nf', esc(e.command), '.fi', '.RE']);

export function renderManPage(program: ProgramSpec, version: string): string {
  const lines = [
    `.TH PAR\\-IDENTITY 1 "" "par\\-identity ${esc(version)}" "User Commands"`,
    '.SH NAME',
    `par\\-identity \\- ${esc(program.description)}`,
    '.SH SYNOPSIS',
    '.B par\\-identity',
    '.I command',
    '[options]',
    '.SH DESCRIPTION',
    esc(
      'par-identity generates a new ECDSA P-256 key, enrolls it with the Datadog API, stores it where the Datadog agent reads it ' +
        '(atomically, mode 0600, keeping the previous identity as a backup), and proves online that the server accepts it. Keys are ' +
        'never taken from flag values and never printed.',
    ),
    '.SH COMMANDS',
    ...program.commands.flatMap(commandSection),
    '.SH CONFIGURATION',
    esc(
      'Keys read from datadog.yaml (in the -c directory) and the -E files; the environment variable DD_<KEY> (upper case, dots as ' +
        'underscores) overrides the files.',
    ),
    ...CONFIG_KEYS.flatMap((k) => [
      '.TP',
      `.B ${esc(k.key)}`,
      esc(
        `${k.use}${k.default !== undefined ? ` (default: ${JSON.stringify(k.default)})` : ''}; env ${[envNameOf(k.key), ...(k.aliases ?? [])].join(', ')}`,
      ),
    ]),
    '.SH HOSTNAME',
    esc(
      'A local identity stores the hostname the agent resolves; when they differ at its next start the runner silently enrolls ' +
        'again. The hostname written is --hostname, else what the running agent answers on its IPC API (GET /agent/hostname on ' +
        "cmd_host:cmd_port), else the result of the agent's own chain, in its order: config hostname; hostname_file; none at all for " +
        'sidecars (ECS or EKS Fargate, ECS managed instances in sidecar mode); GCE metadata; Azure metadata (azure_hostname_style); ' +
        'the FQDN with hostname_fqdn; the container provider; the OS hostname when nothing was found and in the host UTS namespace; ' +
        'the EC2 instance id.',
    ),
    '.PP',
    esc(
      "The container provider runs only when the agent is containerized (DOCKER_DD_AGENT): the docker daemon's Name (DOCKER_HOST, " +
        'else a reachable /var/run/docker.sock or /host/var/run/docker.sock), else, in Kubernetes (KUBERNETES_SERVICE_PORT or ' +
        'KUBERNETES), the node name the kubelet reports (kubernetes_kubelet_host, HTTPS kubernetes_https_kubelet_port then HTTP ' +
        'kubernetes_http_kubelet_port, kubelet_tls_verify, kubelet_client_ca, kubelet_auth_token_path, ' +
        'kubelet_client_crt/kubelet_client_key; GET /spec then /pods, or /stats/summary with kubelet_use_api_server) followed by ' +
        '-cluster_name when cluster_name is a valid lower-case name (any other value is ignored, as by the agent). ' +
        'kubernetes_kubelet_nodename is not used.',
    ),
    '.PP',
    esc(
      'The EC2 instance id (IMDS, IMDSv2 first; else DMI board_asset_tag on a Nitro instance unless ec2_use_dmi is false) replaces ' +
        'the name on ECS on EC2 (AWS_EXECUTION_ENV=AWS_ECS_EC2, ECS_CONTAINER_METADATA_URI(_V4), ' +
        'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or /etc/ecs/ecs.config), on ECS managed instances in daemon mode, when the name starts ' +
        'with ip- or domu (ec2amaz- with ec2_use_windows_prefix_detection), or with ec2_prioritize_instance_id_as_hostname. Features ' +
        'can be removed with autoconfig_exclude_features or added with autoconfig_include_features. Every rotation and status prints ' +
        'the hostname and where it came from.',
    ),
    '.SH ENVIRONMENT',
    '.TP',
    '.B DD_API_KEY, DD_APP_KEY',
    esc('credentials, after --api-key-file/--app-key-file and before the config file.'),
    '.TP',
    '.B DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS',
    esc('when "true", dd_url itself is the API base URL (emulators and tests).'),
    '.TP',
    '.B HTTPS_PROXY, NO_PROXY',
    esc('proxy for API calls.'),
    '.TP',
    '.B NODE_EXTRA_CA_CERTS',
    esc('extra CA certificates; TLS verification is always on.'),
    '.TP',
    '.B KUBECONFIG',
    esc('kubeconfig for the cluster commands, after --kubeconfig; in a Pod the service account is used.'),
    '.TP',
    '.B KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT',
    esc(
      'set in a Pod: selects the in-cluster service account (token, CA and namespace under ' +
        '/var/run/secrets/kubernetes.io/serviceaccount); KUBERNETES_SERVICE_PORT (or KUBERNETES) also lets the hostname chain ask the ' +
        'kubelet, see HOSTNAME.',
    ),
    '.TP',
    '.B DOCKER_DD_AGENT, DOCKER_HOST',
    esc(
      "DOCKER_DD_AGENT (set by the agent's image) marks the agent as containerized, which enables the container provider of the " +
        'hostname chain; DOCKER_HOST names the docker daemon it asks (unix:// or tcp://).',
    ),
    '.TP',
    '.B AWS_EXECUTION_ENV, ECS_CONTAINER_METADATA_URI_V4, ECS_FARGATE',
    esc('ECS detection of the hostname chain: ECS on EC2 uses the EC2 instance id, Fargate has no hostname.'),
    '.TP',
    '.B NO_COLOR',
    esc('disables colour, as does a non-terminal stderr.'),
    '.SH FILES',
    '.TP',
    '.I /etc/datadog\\-agent/privateactionrunner_private_identity.json',
    esc('default identity file (next to datadog.yaml); <file>.bak holds the previous identity.'),
    '.TP',
    '.I /etc/datadog\\-agent/datadog\\-cluster.yaml',
    esc('cluster agent config read by rotate-par-identity (datadog.yaml when it is absent).'),
    '.TP',
    '.I Secret private\\-action\\-runner\\-identity',
    esc('cluster agent identity: data keys private_key, urn, orch_cluster_id, api_key_hash, and previous_private_key / previous_urn.'),
    '.SH EXIT STATUS',
    esc('Each exit status, then the stable error codes (error[CODE] on stderr, "code" in --json) that end with it.'),
    ...exitStatusDocs().flatMap((e) => [
      '.TP',
      `.B ${e.code}`,
      esc(`${e.meaning}.`),
      ...(e.errors.length > 0 ? ['.RS', ...e.errors.flatMap((err) => ['.TP', `.B ${esc(err.code)}`, esc(`${err.meaning}.`)]), '.RE'] : []),
    ]),
    '.SH NODE.JS API',
    esc(
      'The package is also a library: import { rotateIdentity, rotateParIdentity, status, watchIdentity, ParError } from ' +
        "'par-identity' (ESM, TypeScript declarations included).",
    ),
    ...API_FUNCTIONS.flatMap((f) => ['.TP', `.B ${esc(f.signature)}`, esc(f.what)]),
    '.PP',
    esc(
      'Options are the flags above in camelCase, with the same defaults; durations are numbers in the unit their name says ' +
        '(timeoutSeconds, splayMs). The keys may be passed as values (apiKey, appKey) or files (apiKeyFile, appKeyFile); env (default ' +
        'process.env) is only read. The functions print nothing, install no signal handlers and never set the exit status: they ' +
        'resolve with the object --json prints and reject with a ParError whose code is one of those under EXIT STATUS. An AbortSignal ' +
        '(signal) stops a rotation before it enrolls, a rollout, or a watch. See README.md, "Use from Node".',
    ),
    '.SH EXAMPLES',
    ...program.commands.flatMap(exampleLines),
    '.SH SEE ALSO',
    'kubectl(1)',
    '',
  ];
  return lines.join('\n');
}
