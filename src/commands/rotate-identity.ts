import { requireRunnerEnabled, resolveHostname } from '../config/index.js';
import { restartHint } from '../config/runtime-environment.js';
import { StorageError, VerificationError } from '../errors.js';
import { decodeIdentity, encodePrivateJwk, type IdentityRecord, serializeIdentityFile } from '../identity/index.js';
import type { Io } from '../io.js';
import { serviceAccountNamespace } from '../kube/kube-connection.js';
import { type CommandResult, createReporter, type OutputOptions } from '../output.js';
import { backupPathOf, preflightIdentityDirectory, readIdentityFile, replaceFileAtomically } from '../storage/index.js';
import { type CredentialFlags, enrollNewKey, resolveEnrollmentContext } from './enrollment-context.js';
import { type RolloutFlags, rolloutAfterRotation } from './rollout-after-rotation.js';
import { type LocalTargetOptions, resolveLocalTarget } from './local-target.js';
import { describeVerify, verifyAfterRotation } from './verify-step.js';

export interface RotateIdentityOptions extends OutputOptions, CredentialFlags, LocalTargetOptions, RolloutFlags {
  timeoutSeconds: number;
  dryRun: boolean;
  verify: boolean;
}

export async function run(options: RotateIdentityOptions, io: Io): Promise<CommandResult> {
  const started = io.now().getTime();
  const report = createReporter(io, options);

  report.step('resolve config');
  const { config, target } = await resolveLocalTarget(options, io, report);
  requireRunnerEnabled(config);
  const path = target.path;

  report.step('read current identity');
  const current = await readIdentityFile(path);
  if (current.state === 'ok') report.info(`current: ${current.identity.record.urn} (fingerprint ${current.identity.key.kid})`);
  else if (current.state === 'corrupt') report.warn(`the current file does not decode (${current.error.message}); it will be kept aside as ${path}.corrupt-<timestamp> and ${backupPathOf(path)} left as it is`);
  else report.info('no identity yet: this enrolls a first one');

  report.step('pre-flight');
  for (const warning of (await preflightIdentityDirectory(path)).warnings) report.warn(warning);
  const host = resolveHostname(config);
  report.info(`hostname: ${host.hostname} (${host.source})`);
  const ctx = await resolveEnrollmentContext(config, options, io, report);
  const previousUrn = current.state === 'ok' ? current.identity.record.urn : null;

  if (options.dryRun) {
    report.step('dry run: no key generated, nothing enrolled, nothing written');
    return {
      command: 'rotate-identity',
      data: { dryRun: true, identityFile: path, previousUrn, enrollmentUrl: ctx.endpoint.baseUrl, hostname: host.hostname, durationMs: io.now().getTime() - started },
      summary: [`dry run passed: rotate-identity would enroll at ${ctx.endpoint.baseUrl} and replace ${path}`],
    };
  }

  const { key, urn } = await enrollNewKey(ctx, 'private_action_runner', { runnerNamePrefix: host.hostname, hostname: host.hostname }, options.timeoutSeconds, io, report);

  report.step('write identity file atomically');
  const record: IdentityRecord = { privateKey: encodePrivateJwk(key), urn, hostname: host.hostname, apiKeyHash: ctx.apiKeyHash };
  const text = serializeIdentityFile(record);
  const written = await replaceFileAtomically(path, text, { keepBackup: current.state === 'corrupt' ? 'aside' : true });
  if (written.keptAsidePath) report.warn(`the corrupt previous file is kept as ${written.keptAsidePath}`);
  for (const warning of written.warnings) report.warn(warning);

  report.step('read back and decode');
  const readBack = await readIdentityFile(path);
  if (readBack.state !== 'ok' || readBack.text !== text) {
    throw new StorageError('READ_BACK_MISMATCH', `${path} does not read back as written`, `Run \`par-identity status --identity-file ${path}\`; restore with \`par-identity rollback --identity-file ${path}\` if needed.`, { path });
  }
  const identity = decodeIdentity(record);

  const verify = await verifyAfterRotation(ctx, identity, 'private_action_runner', options, started, io, report);
  const restart = restartHint(io.env);
  const rollout = await rolloutAfterRotation(options, key.kid, options.namespace ?? serviceAccountNamespace(io.env) ?? 'default', io, report);
  const rollbackCommand = `par-identity rollback --identity-file ${path}`;
  if (verify.performed && !verify.ok) {
    throw new VerificationError(
      `the new identity ${urn} was written but the server did not accept it: ${verify.reason}`,
      `Both files are kept (${path}, backup ${written.backupPath ?? 'none'}). Do not restart the runner; roll back with: ${rollbackCommand}`,
      { urn, identityFile: path, backupFile: written.backupPath ?? null, rollbackCommand },
    );
  }

  return {
    command: 'rotate-identity',
    data: {
      urn,
      previousUrn,
      fingerprint: key.kid,
      identityFile: path,
      backupFile: written.backupPath ?? null,
      restartHint: restart.command ?? restart.text,
      verify,
      rollout: rollout.data,
      durationMs: io.now().getTime() - started,
    },
    summary: [
      `rotated: ${urn}`,
      `  fingerprint:  ${key.kid}`,
      `  previous:     ${previousUrn ?? '(none)'}`,
      `  file:         ${path} (0600)`,
      `  backup:       ${written.backupPath ?? '(none: no previous file)'}`,
      `  verified:     ${describeVerify(verify)}`,
      `next: ${restart.text}`,
      ...rollout.summary,
      `undo: ${rollbackCommand}`,
    ],
  };
}
