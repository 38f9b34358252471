import type { CredentialsOptions } from '../commands/credentials.js';
import type { EmulatorOptions } from '../commands/emulator.js';
import { countFlag, switchFlag, textFlag, withDefault } from './flag.js';
import { AGENT_CONFIG_FLAGS, configOptions, OUTPUT_FLAGS, outputOptions, PROFILE } from './shared-flags.js';
import { choiceArgument, defineCommand } from './spec.js';
import { portParser } from './value-parsers.js';

// Commands around the rotation: keys in the OS keychain, and the emulators for labs and tests.

export const credentials = defineCommand({
  name: 'credentials',
  stopsOnSignal: true,
  description:
    'store, show or delete the Datadog API/application keys in the OS keychain (Secret Service, macOS Keychain, Windows Credential Manager)',
  arguments: { action: choiceArgument('<action>', 'set | show | delete', ['set', 'show', 'delete']) },
  flags: {
    profile: PROFILE,
    site: textFlag('--site', 'site', 'with set: also store the Datadog site'),
    // show reports which key a rotation would use: the agent config's ones come before the keychain's.
    ...AGENT_CONFIG_FLAGS,
    ...OUTPUT_FLAGS,
  },
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
    toOptions: (v, io): CredentialsOptions => ({
      ...outputOptions(v, io),
      action: v.action,
      profile: v.profile,
      ...(v.site ? { site: v.site } : {}),
      ...configOptions(v),
    }),
  },
});

export const emulator = defineCommand({
  name: 'emulator',
  description: 'run the built-in Datadog enrollment API emulator (and, with --kube, the Kubernetes API emulator) until interrupted',
  flags: {
    port: withDefault(countFlag('--port', 'n', 'enrollment emulator port (0 = any free port)', portParser('--port')), 0),
    kube: switchFlag('--kube', 'also start the Kubernetes API emulator'),
    kubePort: withDefault(countFlag('--kube-port', 'n', 'Kubernetes API emulator port', portParser('--kube-port')), 0),
    kubeconfigOut: textFlag('--kubeconfig-out', 'path', 'write an admin kubeconfig for the Kubernetes API emulator here', {
      completes: 'file',
    }),
    ...OUTPUT_FLAGS,
  },
  examples: [
    {
      what: 'A lab: both emulators and an admin kubeconfig for kubectl',
      command: 'par-identity emulator --kube --kubeconfig-out ./kubeconfig',
    },
  ],
  run: {
    load: () => import('../commands/emulator.js'),
    toOptions: (v, io): EmulatorOptions => ({
      ...outputOptions(v, io),
      port: v.port,
      kube: v.kube,
      kubePort: v.kubePort,
      ...(v.kubeconfigOut ? { kubeconfigOut: v.kubeconfigOut } : {}),
    }),
  },
});
