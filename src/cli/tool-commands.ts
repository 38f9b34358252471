import type { Io } from '../io.js';
import { countFlag, switchFlag, textFlag, withDefault } from './flag.js';
import { AGENT_CONFIG_FLAGS, configOptions, OUTPUT_FLAGS, outputOptions, PROFILE } from './shared-flags.js';
import { choiceArgument, type CommandInput, defineCommand, type Stoppable } from './spec.js';
import { portParser } from './value-parsers.js';

// Commands around the rotation: keys in the OS keychain, and the emulators for labs and tests. As in
// rotation-commands.ts, each command's options type is what its toOptions builds (declared apart from
// the defineCommand literal, so the command module names it with `import type`).

const credentialsArguments = { action: choiceArgument('<action>', 'set | show | delete', ['set', 'show', 'delete']) };

const credentialsFlags = {
  profile: PROFILE,
  site: textFlag('--site', 'site', 'with set: also store the Datadog site'),
  // show reports which key a rotation would use: the agent config's ones come before the keychain's.
  ...AGENT_CONFIG_FLAGS,
  ...OUTPUT_FLAGS,
};

function credentialsOptions(v: CommandInput<typeof credentialsFlags, typeof credentialsArguments>, io: Io) {
  return {
    ...outputOptions(v, io),
    action: v.action,
    profile: v.profile,
    ...(v.site ? { site: v.site } : {}),
    ...configOptions(v),
  };
}

/** What src/commands/credentials.ts takes: its argument's and flags' options and the stop. */
export type CredentialsOptions = ReturnType<typeof credentialsOptions> & Stoppable;

export const credentials = defineCommand({
  name: 'credentials',
  stopsOnSignal: true,
  description:
    'store, show or delete the Datadog API/application keys in the OS keychain (Secret Service, macOS Keychain, Windows Credential Manager)',
  arguments: credentialsArguments,
  flags: credentialsFlags,
  examples: [
    {
      what: 'Store the keys once (asked for without echo, or read from stdin)',
      command: 'par-identity credentials set --site datadoghq.eu',
    },
    { what: 'Show which key a rotation would use, and from where (masked)', command: 'par-identity credentials show' },
  ],
  resultName: (v) => `credentials ${v.action}`,
  run: {
    load: () => import('../commands/credentials.js'),
    toOptions: credentialsOptions,
  },
});

const emulatorFlags = {
  port: withDefault(countFlag('--port', 'n', 'enrollment emulator port (0 = any free port)', portParser('--port')), 0),
  kube: switchFlag('--kube', 'also start the Kubernetes API emulator'),
  kubePort: withDefault(countFlag('--kube-port', 'n', 'Kubernetes API emulator port', portParser('--kube-port')), 0),
  kubeconfigOut: textFlag('--kubeconfig-out', 'path', 'write an admin kubeconfig for the Kubernetes API emulator here', {
    completes: 'file',
  }),
  ...OUTPUT_FLAGS,
};

function emulatorOptions(v: CommandInput<typeof emulatorFlags>, io: Io) {
  return {
    ...outputOptions(v, io),
    port: v.port,
    kube: v.kube,
    kubePort: v.kubePort,
    ...(v.kubeconfigOut ? { kubeconfigOut: v.kubeconfigOut } : {}),
  };
}

/** What src/commands/emulator.ts takes: its flags' options. */
export type EmulatorOptions = ReturnType<typeof emulatorOptions>;

export const emulator = defineCommand({
  name: 'emulator',
  description: 'run the built-in Datadog enrollment API emulator (and, with --kube, the Kubernetes API emulator) until interrupted',
  flags: emulatorFlags,
  examples: [
    {
      what: 'A lab: both emulators and an admin kubeconfig for kubectl',
      command: 'par-identity emulator --kube --kubeconfig-out ./kubeconfig',
    },
  ],
  run: {
    load: () => import('../commands/emulator.js'),
    toOptions: emulatorOptions,
  },
});
