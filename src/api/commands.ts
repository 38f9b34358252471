import { status as statusCommand } from '../cli/inspection-commands.js';
import { rotateIdentity as rotateIdentityCommand, rotateParIdentity as rotateParIdentityCommand } from '../cli/rotation-commands.js';
import type { CommandSpec } from '../cli/spec.js';
import { toParError } from '../errors.js';
import type { Io } from '../io.js';
import type { CommandResult } from '../output.js';
import type { Envelope } from '../results/envelope.js';
import { apiIo, inputOf, jsonResult } from './options.js';
import type { RotateIdentityOptions, RotateParIdentityOptions, RotationResult, StatusOptions, StatusResult } from './types.js';

// The API's rotate and status: the caller's options go through the command table's own toOptions
// (with the flags' defaults), then the command module the CLI runs (src/commands), with an Io that
// prints nothing. Loaded by src/api.ts when first called.

/** toOptions of the command, plus what only a program gives a rotation: the keys themselves and a signal. */
function rotationOptions<O extends object>(spec: CommandSpec<O>, o: RotateIdentityOptions & RotateParIdentityOptions, io: Io) {
  return {
    ...spec.run.toOptions(inputOf(spec, o), io),
    ...(o.apiKey !== undefined ? { apiKey: o.apiKey } : {}),
    ...(o.appKey !== undefined ? { appKey: o.appKey } : {}),
    // Always a signal, the caller's or one that never aborts: without one the rollout would stop on
    // this process's SIGINT/SIGTERM, through handlers the caller did not ask for.
    signal: o.signal ?? new AbortController().signal,
  };
}

/** The command's --json object: the type its renderer built is the type the API answers with. */
async function answer<J extends Envelope>(run: () => Promise<CommandResult<J>>): Promise<J> {
  let result: CommandResult<J>;
  try {
    result = await run();
  } catch (err) {
    // The one error family: anything else is a bug, wrapped as INTERNAL with the original as cause.
    throw toParError(err);
  }
  return jsonResult(result.json);
}

export async function rotateIdentity(o: RotateIdentityOptions): Promise<RotationResult> {
  const { run } = await import('../commands/rotate-identity.js');
  const io = apiIo(o);
  return answer(() => run(rotationOptions(rotateIdentityCommand, o, io), io));
}

export async function rotateParIdentity(o: RotateParIdentityOptions): Promise<RotationResult> {
  const { run } = await import('../commands/rotate-par-identity.js');
  const io = apiIo(o);
  return answer(() => run(rotationOptions(rotateParIdentityCommand, o, io), io));
}

export async function status(o: StatusOptions): Promise<StatusResult> {
  const { run } = await import('../commands/status.js');
  const io = apiIo(o);
  return answer(() => run(statusCommand.run.toOptions(inputOf(statusCommand, o), io), io));
}
