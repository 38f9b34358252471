import type { Stats } from 'node:fs';
import { resolveHostname } from '../config/index.js';
import { StorageError, VerificationError } from '../errors.js';
import { apiKeyHash, type DecodedIdentity } from '../identity/index.js';
import type { Io } from '../io.js';
import { type CommandResult, createReporter, type OutputOptions } from '../output.js';
import { backupPathOf, listRecoverableIdentities, readIdentityFile } from '../storage/index.js';
import { type LocalTargetOptions, resolveLocalTarget } from './local-target.js';
import { describeVerify, type VerifyReport, verifyWithConfig } from './verify-step.js';

export interface StatusOptions extends OutputOptions, LocalTargetOptions {
  verify: boolean;
  timeoutSeconds: number;
}

function describeIdentity(identity: DecodedIdentity) {
  return {
    urn: identity.record.urn,
    orgId: identity.urn.orgId,
    runnerId: identity.urn.runnerId,
    region: identity.urn.region,
    fingerprint: identity.key.kid,
  };
}

function fileFacts(stats: Stats) {
  return { mode: (stats.mode & 0o777).toString(8).padStart(4, '0'), uid: stats.uid, gid: stats.gid };
}

/** Would the Go agent throw this identity away and re-enroll on its next start? (protocol §4) */
function reEnrollReasons(identity: DecodedIdentity, hostname: string, agentKey: string | undefined): string[] {
  const reasons: string[] = [];
  const stored = identity.record;
  if (stored.hostname && stored.hostname !== hostname) reasons.push(`stored hostname ${stored.hostname} differs from the agent's ${hostname}`);
  if (stored.apiKeyHash && agentKey && stored.apiKeyHash !== apiKeyHash(agentKey)) reasons.push("stored api_key_hash differs from the hash of the agent's API key");
  return reasons;
}

export async function run(options: StatusOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  const { config, target } = await resolveLocalTarget(options, io, report);
  const live = await readIdentityFile(target.path);
  const backup = await readIdentityFile(backupPathOf(target.path));
  const recoverable = await listRecoverableIdentities(target.path);
  if (live.state === 'missing') {
    throw new StorageError('IDENTITY_MISSING', `no identity file at ${target.path}`, 'Run `par-identity rotate-identity` to enroll one, or point --identity-file/-c at the right place.', { path: target.path });
  }
  if (live.state === 'corrupt') {
    throw new StorageError(
      'IDENTITY_CORRUPT',
      `${target.path} does not decode: ${live.error.message}`,
      backup.state === 'ok' ? `Restore the backup with \`par-identity rollback --identity-file ${target.path}\`, or rotate again.` : 'Rotate again with `par-identity rotate-identity`.',
      { path: target.path },
    );
  }
  const host = resolveHostname(config);
  const agentKey = config.getString('api_key');
  const reEnroll = reEnrollReasons(live.identity, host.hostname, agentKey);
  // Where a rotation would take its API key from, in resolution order (never the value).
  const apiKeySource = agentKey ? config.sourceOf('api_key') : 'not in env or config: --api-key-file/stdin or the keychain profile at rotation time';
  let verify: VerifyReport = { performed: false };
  if (options.verify) {
    verify = await verifyWithConfig(config, live.identity, 'private_action_runner', io, report, options.timeoutSeconds);
  }
  const current = describeIdentity(live.identity);
  const facts = fileFacts(live.stats);
  const backupInfo = backup.state === 'ok' ? { path: backup.path, ...describeIdentity(backup.identity) } : backup.state === 'corrupt' ? { path: backup.path, corrupt: true } : null;
  const data = {
    identityFile: target.path,
    source: target.source,
    ...current,
    file: facts,
    backup: backupInfo,
    recoverable,
    apiKeySource,
    agentWouldReEnroll: reEnroll.length > 0,
    reEnrollReasons: reEnroll,
    verify,
  };
  const summary = [
    `identity: ${current.urn}`,
    `  org / runner: ${current.orgId} / ${current.runnerId} (region ${current.region})`,
    `  fingerprint:  ${current.fingerprint}`,
    `  file:         ${target.path} (mode ${facts.mode}, uid ${facts.uid}, gid ${facts.gid})`,
    `  backup:       ${backupInfo ? `${backupInfo.path}${'urn' in backupInfo ? ` (${backupInfo.urn})` : ' (does not decode)'}` : '(none)'}`,
    `  API key:      ${apiKeySource} (order: --api-key-file, DD_API_KEY, config, keychain)`,
    `  re-enroll:    ${reEnroll.length ? `YES on next agent start: ${reEnroll.join('; ')}` : 'no (hostname and api_key_hash match the agent)'}`,
    `  verified:     ${options.verify ? describeVerify(verify) : 'not checked (add --verify)'}`,
  ];
  for (const r of recoverable) {
    summary.push(`  recoverable:  ${r.path} (${r.urn ?? `does not decode: ${r.error}`}${r.sameAs ? `; same as the ${r.sameAs === 'live' ? 'live file' : 'backup'}, safe to delete` : ''})`);
  }
  if (facts.mode !== '0600') report.warn(`${target.path} has mode ${facts.mode}; it should be 0600`);
  if (verify.performed && !verify.ok) {
    throw new VerificationError(`the server did not accept ${current.urn}: ${verify.reason}`, 'Rotate again with `par-identity rotate-identity`, or roll back if the backup is the identity that works.', { urn: current.urn });
  }
  return { command: 'status', data, summary };
}
