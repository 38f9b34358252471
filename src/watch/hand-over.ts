import type { DecodedIdentity } from '../identity/index.js';
import type { Io } from '../io.js';
import { type ApplyStep, sendSignal, type SupervisedChild, writeIdentityOutput } from '../reload/index.js';
import { UsageError } from '../errors.js';
import type { EventWriter } from './event-writer.js';
import type { WatchOptions } from './watch-options.js';
import type { WatchPlan } from './watch-plan.js';

// What watch does with every valid identity, in order: the file, then the signal, then the supervised command.

/** The hand-over step that keeps `path` up to date: atomic, 0600, the previous identity as PATH.bak. */
export function outputStep(
  path: string,
  on: { warning(message: string): void; written(path: string, fingerprint: string): void },
): ApplyStep {
  return async (identity) => {
    const written = await writeIdentityOutput(path, identity);
    for (const warning of written.warnings) on.warning(warning);
    on.written(path, identity.key.kid);
  };
}

/** The hand-over steps the flags ask for, in order: file, then signal, then the supervised command. */
export function applySteps(
  options: WatchOptions,
  p: WatchPlan,
  outputPath: string | undefined,
  child: SupervisedChild | undefined,
  io: Io,
  out: EventWriter,
): ApplyStep[] {
  const steps: ApplyStep[] = [];
  if (outputPath) {
    steps.push(
      outputStep(outputPath, {
        warning: (warning) => out.note('warning', { message: warning }, `warning: ${warning}`),
        written: (path, fingerprint) => out.note('written', { path, fingerprint }, `wrote ${path} (fingerprint ${fingerprint})`),
      }),
    );
  }
  if (p.signalTarget) {
    const target = p.signalTarget;
    steps.push(async (identity, reason) => {
      if (reason === 'initial') return;
      const pid = await sendSignal(target);
      out.note('signalled', { pid, signal: target.signal, fingerprint: identity.key.kid }, `sent ${target.signal} to process ${pid}`);
    });
  }
  if (child) {
    steps.push(async (identity, reason) => {
      const env = childEnv(io.env, outputPath!, identity);
      if (reason === 'initial' || child.starts === 0) {
        child.start(env);
        out.note(
          'child-started',
          { pid: child.pid ?? null, command: options.command[0] },
          `started ${options.command[0]} (pid ${child.pid ?? '?'})`,
        );
      } else if (options.onChange === 'signal') {
        if (!child.signal(p.signal)) throw new UsageError(`cannot send ${p.signal} to ${options.command[0]}: it is not running`);
        out.note(
          'child-signalled',
          { pid: child.pid ?? null, signal: p.signal },
          `sent ${p.signal} to ${options.command[0]} (pid ${child.pid})`,
        );
      } else {
        await child.restart(env);
        out.note(
          'child-restarted',
          { pid: child.pid ?? null },
          `restarted ${options.command[0]} with the new identity (pid ${child.pid ?? '?'})`,
        );
      }
    });
  }
  return steps;
}

/** What the supervised command gets: the file to read, and non-secret facts about what is in it. */
function childEnv(base: NodeJS.ProcessEnv, path: string, identity: DecodedIdentity): NodeJS.ProcessEnv {
  return { ...base, PAR_IDENTITY_FILE: path, PAR_IDENTITY_URN: identity.record.urn, PAR_IDENTITY_FINGERPRINT: identity.key.kid };
}
