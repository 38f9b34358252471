import type { AgentConfig, IdentityPath } from '../../config/index.js';
import { readAgentApiKey } from '../../config/credentials.js';
import { type HostResolution, predictReenroll, resolveHost } from '../../host/index.js';
import { restartHint } from '../../config/runtime-environment.js';
import { ParError, StorageError } from '../../errors.js';
import { type DecodedIdentity, encodePrivateJwk, type IdentityRecord, serializeIdentityFile } from '../../identity/index.js';
import type { Io } from '../../io.js';
import {
  acquireIdentityLock,
  backupPathOf,
  type IdentityFileState,
  listLeftovers,
  listRecoverableIdentities,
  liveLockHolder,
  lockPathOf,
  preflightIdentityDirectory,
  previousToKeep,
  readIdentityFile,
  readVerifiedRecord,
  replaceFileAtomically,
  swapIntoService,
  sweepInterruptedWrites,
  writeVerifiedRecord,
  type Leftover,
} from '../../storage/index.js';
import type { FileWhere } from '../../results/identity.js';
import type { RecoverableIdentity } from '../../results/status.js';
import { isNoSpace, noSpaceError } from '../../storage/file-primitives.js';
import {
  amendPendingKey,
  listPossibleOrphans,
  readPendingKey,
  removePendingKey,
  setAsidePendingKey,
  writePendingKey,
} from '../../storage/pending-key.js';
import { verifiedMarkOf } from '../verified-mark.js';
import type {
  CurrentIdentity,
  IdentityTarget,
  NewIdentity,
  PendingKeys,
  Preflight,
  RestoreOutcome,
  TargetFacts,
  TargetLock,
  VerifiedMark,
  WriteOutcome,
} from '../target.js';
import { type Deadline, isoString } from '../../time/index.js';
import { sanitizeServerString } from '../../sanitize.js';
import { splitPending } from '../orphans.js';

// The standalone / node runner's identity file (docs/protocol.md §5), replaced atomically with the previous
// content kept as <file>.bak.

function fromFile(live: IdentityFileState, backup: IdentityFileState, lastVerified: VerifiedMark | undefined): CurrentIdentity {
  const current: CurrentIdentity = {
    state: live.state === 'ok' ? 'ok' : live.state,
    notes: [],
    warnings: [],
    ...(lastVerified ? { lastVerified } : {}),
  };
  if (live.state !== 'missing') {
    current.rotatedAt = isoString(live.stats.mtime);
    current.rotatedAtSource = 'file modification time';
  }
  if (live.state === 'ok') {
    current.identity = live.identity;
    current.notes.push(`current: ${live.identity.record.urn} (fingerprint ${live.identity.key.kid})`);
  } else if (live.state === 'corrupt') {
    current.problem = live.error;
    current.warnings.push(
      `the current file does not decode (${live.error.message}); it will be kept aside as ${live.path}.corrupt-<UTC time> ` +
        `and ${backupPathOf(live.path)} left as it is`,
    );
  } else {
    current.notes.push('no identity yet: this enrolls a first one');
  }
  if (backup.state === 'ok') current.previous = backup.identity;
  if (live.state === 'ok' && live.identity.record.unknownFields) current.unknownFields = live.identity.record.unknownFields;
  if (backup.state === 'ok' && backup.identity.record.unknownFields) current.previousUnknownFields = backup.identity.record.unknownFields;
  return current;
}

const LEFTOVER_LABEL: Record<Leftover['kind'], string> = {
  'stale-lock': 'stale lock',
  'invalid-lock': 'lock that is not one par-identity wrote',
  takeover: 'takeover file of a dead taker',
  temp: 'temporary file of an interrupted write',
};
const LEFTOVER_ADVICE: Record<Leftover['kind'], string> = {
  'stale-lock': 'the next rotate-identity or rollback takes it over',
  'invalid-lock': 'never taken over: while it is there, rotate-identity and rollback refuse (LOCKED); check who wrote it, then remove it',
  takeover:
    'removed by the next takeover of that lock, or by the next lock after an hour; safe to delete while no par-identity run is active',
  temp: 'the next rotate-identity or rollback deletes it, or keeps an identity found nowhere else as .restore-*',
};

export class LocalFileTarget implements IdentityTarget {
  readonly kind = 'file' as const;
  readonly flavor = 'private_action_runner' as const;
  readonly label: string;
  readonly selector: string[];
  readonly where: FileWhere;
  readonly path: string;

  constructor(
    readonly config: AgentConfig,
    readonly identityPath: IdentityPath,
    configSelector: string[],
    private readonly io: Io,
    /** --hostname: overrides the agent's IPC answer and the hostname chain. */
    private readonly hostnameOverride?: string,
    private readonly agentVersion?: string,
    /** The command's deadline: the hostname lookup is cut by it. */
    private readonly deadline?: Deadline,
  ) {
    this.path = identityPath.path;
    this.label = `identity file ${this.path}`;
    this.selector = ['--identity-file', this.path, ...configSelector];
    this.where = { identityFile: this.path };
  }

  async lock(waitSeconds: number, options: { takeOver?: boolean; signal?: AbortSignal } = {}): Promise<TargetLock> {
    const held = await acquireIdentityLock(this.path, {
      waitSeconds,
      ...(options.takeOver === false ? { takeOver: false } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    }).catch(async (err: unknown) => {
      // A reading run leaves a stale lock in place (status lists it) and still finishes the crashed
      // run's sweep: no live process holds the lock, and the sweep never touches a live pid's temp.
      if (err instanceof ParError && err.code === 'LOCKED' && typeof err.details.stale === 'string') return undefined;
      if (err instanceof ParError || options.signal?.aborted) throw err;
      // The lock file lives beside the identity: a missing or read-only directory is named as such.
      if (isNoSpace(err)) throw noSpaceError(err, lockPathOf(this.path), 'the lock', 'Nothing was changed.');
      await preflightIdentityDirectory(this.path);
      throw new StorageError(
        'WRITE_FAILED',
        `cannot create the lock ${lockPathOf(this.path)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        'Nothing was changed. Check the permissions of the directory, then run again.',
        { path: this.path },
      );
    });
    const notes = [
      held
        ? `lock: ${lockPathOf(this.path)} (pid ${held.holder.pid})`
        : `lock: ${lockPathOf(this.path)} is stale and left in place (the next rotation or rollback takes it over)`,
    ];
    const warnings: string[] = [];
    try {
      // Under the lock, so no live run's temp file is mistaken for a crashed one's.
      const swept = await sweepInterruptedWrites(this.path);
      const removed = swept.removed.map((name) => sanitizeServerString(name, 120)).join(', ');
      if (swept.removed.length) warnings.push(`removed ${swept.removed.length} temporary file(s) left by an interrupted run: ${removed}`);
      for (const kept of swept.recovered)
        warnings.push(`an interrupted run left an identity found nowhere else; kept as ${kept} (see \`par-identity status\`)`);
      // Names chosen by whoever could write the directory: shown through the sanitizer.
      for (const left of swept.leftAlone) {
        warnings.push(
          `left alone ${sanitizeServerString(left.name, 120)} beside the identity (${left.why}): ` +
            `not created by this user, so never chmod'ed, moved or removed; check it and remove it if it is not yours`,
        );
      }
    } catch (err) {
      await held?.release();
      throw err;
    }
    return { release: async () => held?.release(), notes, warnings };
  }

  /** `<file>.pending` beside the identity (docs/identity-lifecycle.md §3). */
  get pending(): PendingKeys {
    const path = this.path;
    return {
      where: `${path}.pending`,
      keep: (key, meta) =>
        writePendingKey(path, {
          privateKey: encodePrivateJwk(key),
          createdAt: isoString(meta.createdAt),
          runnerName: meta.runnerName,
          enrollmentUrl: meta.enrollmentUrl,
          ...(meta.holder ? { holder: meta.holder } : {}),
        }),
      amend: (change) => amendPendingKey(path, change),
      read: () => readPendingKey(path),
      clear: () => removePendingKey(path),
      setAside: async (now) => setAsidePendingKey(path, now, await this.heldFingerprints()),
      list: async () => listPossibleOrphans(path, await this.heldFingerprints(), this.io.now().getTime()),
    };
  }

  /** The keys the live file, the backup and the recovery files hold: a pending key equal to one of them is no orphan. */
  private async heldFingerprints(): Promise<string[]> {
    const held: string[] = [];
    for (const state of [await readIdentityFile(this.path), await readIdentityFile(backupPathOf(this.path))])
      if (state.state === 'ok') held.push(state.identity.key.kid);
    for (const kept of await listRecoverableIdentities(this.path)) if (kept.fingerprint) held.push(kept.fingerprint);
    return held;
  }

  async read(): Promise<CurrentIdentity> {
    const mark = await readVerifiedRecord(this.path);
    const current = fromFile(
      await readIdentityFile(this.path),
      await readIdentityFile(backupPathOf(this.path)),
      mark && !('refused' in mark) ? mark : undefined,
    );
    if (mark && 'refused' in mark) current.warnings.push(mark.refused);
    return current;
  }

  private host: Promise<HostResolution> | undefined;

  /** The hostname the running agent compares with the stored one (docs/protocol.md §4), resolved once a run. */
  resolveHost(): Promise<HostResolution> {
    this.host ??= resolveHost(this.config, {
      env: this.io.env,
      ...(this.hostnameOverride === undefined ? {} : { override: this.hostnameOverride }),
      ...(this.agentVersion === undefined ? {} : { agentVersion: this.agentVersion }),
      ...(this.deadline ? { deadline: this.deadline } : {}),
    });
    return this.host;
  }

  async preflight(): Promise<Preflight> {
    const warnings = [...(await preflightIdentityDirectory(this.path)).warnings];
    const host = await this.resolveHost();
    // Why the running agent was not the source, when it was not (IPC disabled, no token, refused, "").
    const why = host.source !== 'agent IPC' && host.source !== '--hostname' && host.notes[0] ? [`  ${host.notes[0]}`] : [];
    return {
      naming: { flavor: this.flavor, runnerNamePrefix: host.hostname, hostname: host.hostname, hostnameSource: host.source },
      notes: [
        `hostname: ${host.hostname} (${host.source})`,
        ...why,
        `directory ${this.path.replace(/\/[^/]*$/, '') || '/'}: a temporary file can be created`,
      ],
      warnings,
    };
  }

  describeWrite(current: CurrentIdentity): string {
    const keep = current.state !== 'missing' ? `; keep the current file as ${backupPathOf(this.path)}` : '';
    return `write ${this.path} atomically (temp file, fsync, rename, 0600)${keep}`;
  }

  async write(current: CurrentIdentity, next: NewIdentity): Promise<WriteOutcome> {
    // A corrupt live file goes aside (<name>.corrupt-<time>), never onto a good backup; a live identity
    // that never passed verification never pushes out the verified backup (docs/identity-lifecycle.md §2).
    const { unverifiedDropped } = previousToKeep(current, current.lastVerified);
    const keepBackup = current.state === 'corrupt' ? 'aside' : !unverifiedDropped;
    const written = await replaceFileAtomically(this.path, this.serialize(next), { keepBackup });
    const backupFile = written.backupPath ?? null;
    // Proven before the write, the new identity is the verified one; written unproven (--no-verify), it
    // is the one a later rotation must not keep (docs/identity-lifecycle.md §2).
    const mark = next.verifiedAt
      ? verifiedMarkOf(next, next.verifiedAt)
      : current.lastVerified && { ...current.lastVerified, unverified: next.key.kid };
    const markWarnings = mark
      ? await writeVerifiedRecord(this.path, mark).then(
          () => [],
          (err: unknown) => [
            next.verifiedAt
              ? `could not record ${next.urn} as the last verified identity: ${(err as Error).message}`
              : `could not note ${next.urn} as not yet verified: ${(err as Error).message}`,
          ],
        )
      : [];
    const dropped = unverifiedDropped
      ? [
          `${unverifiedDropped.record.urn} (in service, never verified) is replaced and not kept; ${backupPathOf(this.path)} ` +
            `keeps ${current.previous?.record.urn}, the last verified identity. ` +
            `Remove ${unverifiedDropped.record.urn} in Datadog if it is not used elsewhere`,
        ]
      : [];
    return {
      previousKept: Boolean(backupFile) || Boolean(current.previous),
      notes: [],
      warnings: [
        ...written.warnings,
        ...markWarnings,
        ...dropped,
        ...(written.keptAsidePath ? [`the corrupt previous file is kept as ${written.keptAsidePath}`] : []),
      ],
      data: { backupFile: backupFile ?? (current.previous ? backupPathOf(this.path) : null), keptAside: written.keptAsidePath ?? null },
      lines: [`  file:         ${this.path} (0600)`, `  backup:       ${backupFile ?? '(none: no previous file)'}`],
    };
  }

  private serialize(next: NewIdentity): string {
    const record: IdentityRecord = {
      privateKey: encodePrivateJwk(next.key),
      urn: next.urn,
      ...(next.hostname ? { hostname: next.hostname } : {}),
      apiKeyHash: next.apiKeyHash,
    };
    return serializeIdentityFile(record);
  }

  async readBack(next: NewIdentity): Promise<DecodedIdentity> {
    const readBack = await readIdentityFile(this.path);
    if (readBack.state !== 'ok' || readBack.text !== this.serialize(next)) {
      throw new StorageError(
        'READ_BACK_MISMATCH',
        `${this.path} does not read back as written`,
        `Run \`par-identity status --identity-file ${this.path}\`; restore with \`par-identity rollback --identity-file ${this.path}\` if needed.`,
        { path: this.path },
      );
    }
    return readBack.identity;
  }

  /** The backup a rollback puts back in service; NO_BACKUP / BACKUP_CORRUPT when there is none to use. */
  private async usableBackup(): Promise<Extract<IdentityFileState, { state: 'ok' }>> {
    const backupPath = backupPathOf(this.path);
    const backup = await readIdentityFile(backupPath);
    if (backup.state === 'missing') {
      throw new StorageError(
        'NO_BACKUP',
        `there is no backup ${backupPath} to roll back to`,
        'Nothing was changed. A backup exists only after a rotation replaced an identity.',
        { path: backupPath },
      );
    }
    if (backup.state === 'corrupt') {
      throw new StorageError(
        'BACKUP_CORRUPT',
        `the backup ${backupPath} does not decode (${backup.error.message})`,
        'Nothing was changed. Rotate again instead of rolling back.',
        { path: backupPath },
      );
    }
    return backup;
  }

  async planRestore(current: CurrentIdentity): Promise<string> {
    const backup = await this.usableBackup();
    // The swap writes its temporary files beside the identity, as a rotation does.
    await preflightIdentityDirectory(this.path);
    const replaced = current.identity ? `the replaced ${current.identity.record.urn}` : 'the replaced file';
    return `swap ${backup.path} (${backup.identity.record.urn}) into ${this.path} atomically; ${replaced} becomes ${backup.path}`;
  }

  async restore(): Promise<RestoreOutcome> {
    const path = this.path;
    const backupPath = backupPathOf(path);
    const backup = await this.usableBackup();
    const live = await readIdentityFile(path);
    const written = await swapIntoService(path, { liveCorrupt: live.state === 'corrupt' });
    const readBack = await readIdentityFile(path);
    if (readBack.state !== 'ok' || readBack.text !== backup.text) {
      throw new StorageError('READ_BACK_MISMATCH', `${path} does not read back as restored`, `Inspect ${path} and ${backupPath} by hand.`, {
        path,
      });
    }
    const replacedUrn = live.state === 'ok' ? live.identity.record.urn : null;
    return {
      restored: readBack.identity,
      replacedUrn,
      warnings: [...written.warnings, ...(written.keptAsidePath ? [`the corrupt live file is kept as ${written.keptAsidePath}`] : [])],
      data: { backupFile: written.backupPath ?? null },
      lines: [`  replaced:     ${replacedUrn ?? '(no decodable identity)'}, now kept as ${written.backupPath ?? '(none)'}`],
    };
  }

  async recordVerified(identity: DecodedIdentity, at: Date): Promise<{ resourceVersion?: string }> {
    await writeVerifiedRecord(this.path, { fingerprint: identity.key.kid, urn: identity.record.urn, verifiedAt: isoString(at) });
    return {};
  }

  async facts(current: CurrentIdentity): Promise<TargetFacts> {
    const live = await readIdentityFile(this.path);
    const backup = await readIdentityFile(backupPathOf(this.path));
    const warnings: string[] = [];
    const stats = live.state === 'missing' ? undefined : live.stats;
    const file = stats ? { mode: (stats.mode & 0o777).toString(8).padStart(4, '0'), uid: stats.uid, gid: stats.gid } : null;
    if (file && file.mode !== '0600') warnings.push(`${this.path} has mode ${file.mode}; it should be 0600`);
    // A reading run prints no warning of read(): a mark that is not believed is said here.
    const mark = await readVerifiedRecord(this.path);
    if (mark && 'refused' in mark) warnings.push(mark.refused);
    const host = await this.resolveHost();
    // The key the agent reads, ENC[] resolved as the agent does; a backend failure is reported, not fatal here.
    let agentKey: string | undefined;
    try {
      agentKey = readAgentApiKey(this.config)?.value;
    } catch (err) {
      warnings.push(`cannot check api_key_hash: ${(err as Error).message}`);
    }
    const reEnroll = current.identity ? predictReenroll(current.identity.record, host.hostname, agentKey) : [];
    // Where a rotation would take its API key from, in resolution order (never the value).
    const apiKeySource = agentKey
      ? this.config.sourceOf('api_key')
      : 'not in env or config: --api-key-file/stdin or the keychain profile at rotation time';
    const backupInfo =
      backup.state === 'ok'
        ? {
            path: backup.path,
            urn: backup.identity.record.urn,
            orgId: backup.identity.urn.orgId,
            runnerId: backup.identity.urn.runnerId,
            region: backup.identity.urn.region,
            fingerprint: backup.identity.key.kid,
          }
        : backup.state === 'corrupt'
          ? { path: backup.path, corrupt: true as const }
          : null;
    const backupWrittenAt = backup.state === 'missing' ? null : isoString(backup.stats.mtime);
    const recoverable = await listRecoverableIdentities(this.path);
    const leftovers = await listLeftovers(this.path);
    // A live rotation's key is no orphan: its record names its holder; an older record, the lock does.
    const lockHolder = await liveLockHolder(this.path);
    return {
      ...splitPending(await this.pending.list(), lockHolder && { pid: lockHolder.pid, host: lockHolder.host, path: lockPathOf(this.path) }),
      data: {
        recoverable,
        leftovers,
        source: this.identityPath.source,
        hostname: host.hostname,
        hostnameSource: host.source,
        file,
        backup: backupInfo ? { ...backupInfo, writtenAt: backupWrittenAt } : null,
        apiKeySource,
        agentWouldReEnroll: reEnroll.length > 0,
        reEnrollReasons: reEnroll,
      },
      lines: [
        `  file:         ${this.path} (mode ${file?.mode}, uid ${file?.uid}, gid ${file?.gid})`,
        `  backup:       ${describeBackup(backupInfo, backupWrittenAt)}`,
        `  hostname:     ${host.hostname || '""'} (${host.source})`,
        `  API key:      ${apiKeySource} (order: --api-key-file, DD_API_KEY, config, keychain)`,
        ...recoverable.map((r) => `  recoverable:  ${describeRecoverable(r)}`),
        ...leftovers.map((l) => `  leftover:     ${l.path} (${LEFTOVER_LABEL[l.kind]}: ${l.detail}; ${LEFTOVER_ADVICE[l.kind]})`),
        `  re-enroll:    ${reEnroll.length ? `YES on next agent start: ${reEnroll.join('; ')}` : 'no (hostname and api_key_hash match the agent)'}`,
      ],
      warnings,
    };
  }

  restartAdvice(): string {
    return restartHint(this.io.env).text;
  }

  restartCommand(): string {
    const hint = restartHint(this.io.env);
    return hint.command ?? hint.text;
  }
}

// Builders of two status lines of inspect(), kept out of the line list so each reads on one line.

/** The backup: its path, its URN (or that it does not decode) and when it was written; '(none)' without one. */
function describeBackup(backup: { path: string; urn?: string } | null, writtenAt: string | null): string {
  if (!backup) return '(none)';
  return `${backup.path}${'urn' in backup ? ` (${backup.urn})` : ' (does not decode)'}, written ${writtenAt}`;
}

/** A recoverable identity file: its path, its URN (or why it does not decode), and whether it duplicates the live file or the backup. */
function describeRecoverable(r: RecoverableIdentity): string {
  const same = r.sameAs ? `; same as the ${r.sameAs === 'live' ? 'live file' : 'backup'}, safe to delete` : '';
  return `${r.path} (${r.urn ?? `does not decode: ${r.error}`}${same})`;
}
