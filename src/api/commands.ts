import type { StatusOptions as StatusCommandOptions } from '../commands/status.js';
import { toParError } from '../errors.js';
import { type CommandResult, resultObject } from '../output.js';
import type { RotationOptions } from '../rotation/options.js';
import { API_DEFAULTS, apiIo, jsonResult } from './options.js';
import type { RotateIdentityOptions, RotateParIdentityOptions, RotationResult, StatusOptions, StatusResult } from './types.js';

// The API's rotate and status: options → the command's own options, then the command module the
// CLI runs (src/commands), with an Io that prints nothing. Loaded by src/api.ts when first called.

/** Only the fields given: the commands tell "absent" from "false" in places (connections). */
function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (o[key] !== undefined) out[key] = o[key];
  return out;
}

/** What both rotate functions share; the flags' defaults where the caller gave nothing. */
function rotationOptions(o: RotateIdentityOptions & RotateParIdentityOptions): RotationOptions {
  return {
    json: true,
    color: false,
    cfgPath: o.cfgPath ?? API_DEFAULTS.cfgPath,
    extraCfg: o.extraCfg ?? [],
    ...pick(o, ['identityFile', 'k8sSecret', 'hostname', 'kubeconfig', 'context', 'namespace', 'secretName']),
    ...pick(o, ['apiKey', 'appKey', 'apiKeyFile', 'appKeyFile', 'agentVersion', 'rollout', 'ifOlderThanSeconds', 'waitLockSeconds']),
    // Always a signal, the caller's or one that never aborts: without one the rollout would stop on
    // this process's SIGINT/SIGTERM, through handlers the caller did not ask for.
    signal: o.signal ?? new AbortController().signal,
    profile: o.profile ?? API_DEFAULTS.profile,
    ...(o.connections === false ? { connections: false } : {}),
    keepPrevious: o.keepPrevious !== false,
    timeoutSeconds: o.timeoutSeconds ?? API_DEFAULTS.rotationTimeoutSeconds,
    dryRun: o.dryRun === true,
    verify: o.verify !== false,
    fallback: o.fallback === true,
    rolloutTimeoutSeconds: o.rolloutTimeoutSeconds ?? API_DEFAULTS.rolloutTimeoutSeconds,
  };
}

async function answer<T>(run: () => Promise<CommandResult>): Promise<T> {
  let result: CommandResult;
  try {
    result = await run();
  } catch (err) {
    // The one error family: anything else is a bug, wrapped as INTERNAL with the original as cause.
    throw toParError(err);
  }
  return jsonResult<T>(resultObject(result));
}

export async function rotateIdentity(o: RotateIdentityOptions): Promise<RotationResult> {
  const { run } = await import('../commands/rotate-identity.js');
  return answer(() => run(rotationOptions(o), apiIo(o)));
}

export async function rotateParIdentity(o: RotateParIdentityOptions): Promise<RotationResult> {
  const { run } = await import('../commands/rotate-par-identity.js');
  return answer(() => run(rotationOptions(o), apiIo(o)));
}

export async function status(o: StatusOptions): Promise<StatusResult> {
  const { run } = await import('../commands/status.js');
  const options: StatusCommandOptions = {
    json: true,
    color: false,
    cfgPath: o.cfgPath ?? API_DEFAULTS.cfgPath,
    extraCfg: o.extraCfg ?? [],
    ...pick(o, ['identityFile', 'k8sSecret', 'hostname', 'kubeconfig', 'context', 'namespace', 'secretName', 'pods']),
    secret: o.secret === true,
    ...(o.allNamespaces ? { allNamespaces: true } : {}),
    verify: o.verify === true,
    timeoutSeconds: o.timeoutSeconds ?? API_DEFAULTS.statusTimeoutSeconds,
  };
  return answer(() => run(options, apiIo(o)));
}
