import type { Stats } from 'node:fs';
import { readAgentApiKey } from '../config/credentials.js';
import { StorageError, VerificationError } from '../errors.js';
import { predictReenroll, resolveHost } from '../host/index.js';
import type { DecodedIdentity } from '../identity/index.js';
import type { Io } from '../io.js';
import { type CommandResult, createReporter, type OutputOptions } from '../output.js';
import { backupPathOf, readIdentityFile } from '../storage/index.js';
import { type LocalTargetOptions, resolveLocalTarget } from './local-target.js';
import { describeVerify, type VerifyReport, verifyWithConfig } from './verify-step.js';

export interface StatusOptions extends OutputOptions, LocalTargetOptions {
  verify: boolean;
  timeoutSeconds: number;
  /** --hostname: overrides agent IPC and the hostname chain. */
  hostname?: string;
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

export async function run(options: StatusOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  const { config, target } = await resolveLocalTarget(options, io, report);
  const live = await readIdentityFile(target.path);
  const backup = await readIdentityFile(backupPathOf(target.path));
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
  const host = await resolveHost(config, { env: io.env, ...(options.hostname === undefined ? {} : { override: options.hostname }) });
  // The key the agent reads, ENC[] resolved as the agent does; a backend failure is reported, not fatal here.
  let agentKey: string | undefined;
  try {
    agentKey = (await readAgentApiKey(config, io.env))?.value;
  } catch (err) {
    report.warn(`cannot check api_key_hash: ${(err as Error).message}`);
  }
  const reEnroll = predictReenroll(live.identity.record, host.hostname, agentKey);
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
    apiKeySource,
    hostname: host.hostname,
    hostnameSource: host.source,
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
    `  hostname:     ${host.hostname || '""'} (${host.source})`,
    `  API key:      ${apiKeySource} (order: --api-key-file, DD_API_KEY, config, keychain)`,
    `  re-enroll:    ${reEnroll.length ? `YES on next agent start: ${reEnroll.join('; ')}` : 'no (hostname and api_key_hash match the agent)'}`,
    `  verified:     ${options.verify ? describeVerify(verify) : 'not checked (add --verify)'}`,
  ];
  if (facts.mode !== '0600') report.warn(`${target.path} has mode ${facts.mode}; it should be 0600`);
  if (verify.performed && !verify.ok) {
    throw new VerificationError(`the server did not accept ${current.urn}: ${verify.reason}`, 'Rotate again with `par-identity rotate-identity`, or roll back if the backup is the identity that works.', { urn: current.urn });
  }
  return { command: 'status', data, summary };
}
