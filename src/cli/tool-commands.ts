import type { CredentialsOptions } from '../commands/credentials.js';
import type { EmulatorOptions } from '../commands/emulator.js';
import { cfgpathFlag, configOptions, extraCfgFlag, OUTPUT_FLAGS, outputOptions, PROFILE_FLAG } from './shared-flags.js';
import type { CommandSpec } from './spec.js';
import { portParser } from './value-parsers.js';

// Commands around the rotation: keys in the OS keychain, and the emulators for labs and tests.

const CREDENTIAL_ACTIONS = ['set', 'show', 'delete'] as const;

export const credentials: CommandSpec<CredentialsOptions> = {
  name: 'credentials',
  stopsOnSignal: true,
  description: 'store, show or delete the Datadog API/application keys in the OS keychain (Secret Service, macOS Keychain, Windows Credential Manager)',
  arguments: [{ name: '<action>', help: 'set | show | delete', choices: CREDENTIAL_ACTIONS }],
  flags: [
    PROFILE_FLAG('keychain profile'),
    { flags: '--site <site>', help: 'with set: also store the Datadog site' },
    cfgpathFlag('with show: agent config whose keys take precedence'),
    extraCfgFlag('with show: extra agent config file (repeatable)'),
    ...OUTPUT_FLAGS,
  ],
  examples: [
    { what: 'Store the keys once (asked for without echo, or read from stdin)', command: 'par-identity credentials set --site datadoghq.eu' },
    { what: 'Show which key a rotation would use, and from where (masked)', command: 'par-identity credentials show' },
  ],
  resultName: (raw) => `credentials ${raw.action as string}`,
  run: {
    load: () => import('../commands/credentials.js'),
    toOptions: (raw, io) => ({
      ...outputOptions(raw, io),
      action: raw.action as (typeof CREDENTIAL_ACTIONS)[number],
      profile: raw.profile as string,
      ...(raw.site ? { site: raw.site as string } : {}),
      ...configOptions(raw),
    }),
  },
};

export const emulator: CommandSpec<EmulatorOptions> = {
  name: 'emulator',
  description: 'run the built-in Datadog enrollment API emulator (and, with --kube, the Kubernetes API emulator) until interrupted',
  flags: [
    { flags: '--port <n>', help: 'enrollment emulator port (0 = any free port)', default: '0', parse: portParser('--port') },
    { flags: '--kube', help: 'also start the Kubernetes API emulator' },
    { flags: '--kube-port <n>', help: 'Kubernetes API emulator port', default: '0', parse: portParser('--kube-port') },
    { flags: '--kubeconfig-out <path>', help: 'write an admin kubeconfig for the Kubernetes API emulator here' },
    ...OUTPUT_FLAGS,
  ],
  examples: [
    { what: 'A lab: both emulators and an admin kubeconfig for kubectl', command: 'par-identity emulator --kube --kubeconfig-out ./kubeconfig' },
  ],
  run: {
    load: () => import('../commands/emulator.js'),
    toOptions: (raw, io) => ({
      ...outputOptions(raw, io),
      port: Number(raw.port),
      kube: Boolean(raw.kube),
      kubePort: Number(raw.kubePort),
      ...(raw.kubeconfigOut ? { kubeconfigOut: raw.kubeconfigOut as string } : {}),
    }),
  },
};
