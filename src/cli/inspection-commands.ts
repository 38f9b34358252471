import { DURATIONS, duration } from './duration-flags.js';
import { CONFIG_FLAGS, KUBE_FLAGS, kubeOptions, localOptions, OUTPUT_FLAGS, outputOptions } from './shared-flags.js';
import type { CommandSpec } from './spec.js';

// Looking at the identity in place, and putting the previous one back.

export const status: CommandSpec = {
  name: 'status',
  description: 'show where the identity is, what it is, and whether the agent would keep it',
  flags: [
    ...CONFIG_FLAGS,
    { flags: '--secret', help: "show the cluster agent's identity Secret (current and previous) instead of the file" },
    ...KUBE_FLAGS,
    { flags: '--verify', help: 'also prove online that the server accepts the identity (signed health check)' },
    { flags: '--timeout <duration>', help: 'deadline for --verify', default: 30, parse: duration(DURATIONS.timeout) },
    ...OUTPUT_FLAGS,
  ],
  examples: [
    { what: 'Show the local identity and prove the server accepts it', command: 'par-identity status --verify' },
    { what: 'Show both identities kept in the Secret', command: 'par-identity status --secret -n datadog' },
  ],
  run: {
    load: (raw) => (raw.secret ? import('../commands/secret-status.js') : import('../commands/status.js')),
    toOptions: (raw, io) => ({
      ...localOptions(raw),
      ...kubeOptions(raw),
      ...outputOptions(raw, io),
      verify: Boolean(raw.verify),
      timeoutSeconds: raw.timeout as number,
    }),
  },
};

export const rollback: CommandSpec = {
  name: 'rollback',
  description: 'swap the backup identity (<file>.bak) back in atomically; the replaced one becomes the backup',
  flags: [
    ...CONFIG_FLAGS,
    { flags: '--secret', help: "restore previous_* in the cluster agent's identity Secret instead of the file backup" },
    ...KUBE_FLAGS,
    { flags: '--no-verify', help: 'skip the signed health check of the restored identity' },
    { flags: '--timeout <duration>', help: 'deadline for verification', default: 30, parse: duration(DURATIONS.timeout) },
    ...OUTPUT_FLAGS,
  ],
  examples: [
    { what: 'Undo the last rotation', command: 'par-identity rollback' },
    { what: "Restore the previous identity kept in the cluster agent's Secret", command: 'par-identity rollback --secret -n datadog' },
  ],
  run: {
    load: (raw) => (raw.secret ? import('../commands/secret-rollback.js') : import('../commands/rollback.js')),
    toOptions: (raw, io) => ({
      ...localOptions(raw),
      ...kubeOptions(raw),
      ...outputOptions(raw, io),
      verify: raw.verify !== false,
      timeoutSeconds: raw.timeout as number,
    }),
  },
};
