import { restartHint } from '../config/runtime-environment.js';
import { StorageError, VerificationError } from '../errors.js';
import type { Io } from '../io.js';
import { type CommandResult, createReporter, type OutputOptions } from '../output.js';
import { backupPathOf, readIdentityFile, swapIntoService } from '../storage/index.js';
import { type LocalTargetOptions, resolveLocalTarget } from './local-target.js';
import { describeVerify, type VerifyReport, verifyWithConfig } from './verify-step.js';

export interface RollbackOptions extends OutputOptions, LocalTargetOptions {
  verify: boolean;
  timeoutSeconds: number;
}

/** Swaps <file>.bak back in atomically; the identity it replaces becomes the new .bak. */
export async function run(options: RollbackOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  const { config, target } = await resolveLocalTarget(options, io, report);
  const path = target.path;
  const backupPath = backupPathOf(path);
  const backup = await readIdentityFile(backupPath);
  if (backup.state === 'missing') {
    throw new StorageError('NO_BACKUP', `there is no backup ${backupPath} to roll back to`, 'Nothing was changed. A backup exists only after a rotation replaced an identity.', { path: backupPath });
  }
  if (backup.state === 'corrupt') {
    throw new StorageError('BACKUP_CORRUPT', `the backup ${backupPath} does not decode (${backup.error.message})`, 'Nothing was changed. Rotate again instead of rolling back.', { path: backupPath });
  }
  const live = await readIdentityFile(path);
  const replacedUrn = live.state === 'ok' ? live.identity.record.urn : null;
  report.step(`restore ${backup.identity.record.urn} from ${backupPath}`);
  const written = await swapIntoService(path, { liveCorrupt: live.state === 'corrupt' });
  if (written.keptAsidePath) report.warn(`the corrupt live file is kept as ${written.keptAsidePath}`);
  for (const warning of written.warnings) report.warn(warning);
  const readBack = await readIdentityFile(path);
  if (readBack.state !== 'ok' || readBack.text !== backup.text) {
    throw new StorageError('READ_BACK_MISMATCH', `${path} does not read back as restored`, `Inspect ${path} and ${backupPath} by hand.`, { path });
  }
  let verify: VerifyReport = { performed: false };
  if (options.verify) {
    verify = await verifyWithConfig(config, readBack.identity, 'private_action_runner', io, report, options.timeoutSeconds);
  }
  const urn = readBack.identity.record.urn;
  if (verify.performed && !verify.ok) {
    throw new VerificationError(`rolled back to ${urn}, but the server did not accept it: ${verify.reason}`, `The runner may have been removed in Datadog. Roll forward again with \`par-identity rollback --identity-file ${path}\` or rotate anew.`, { urn, identityFile: path });
  }
  const restart = restartHint(io.env);
  return {
    command: 'rollback',
    data: { urn, replacedUrn, fingerprint: readBack.identity.key.kid, identityFile: path, backupFile: written.backupPath ?? null, restartHint: restart.command ?? restart.text, verify },
    summary: [
      `rolled back to: ${urn}`,
      `  fingerprint:  ${readBack.identity.key.kid}`,
      `  replaced:     ${replacedUrn ?? '(no decodable identity)'}, now kept as ${written.backupPath ?? '(none)'}`,
      `  verified:     ${describeVerify(verify)}`,
      `next: ${restart.text}`,
    ],
  };
}
