import type { V1Secret } from '@kubernetes/client-node';
import { programName } from '../../single-executable.js';
import type { AgentConfig } from '../../config/index.js';
import type { AgentFlavor } from '../../enrollment/index.js';
import { ConflictError, KubernetesError, ParError, StorageError } from '../../errors.js';
import { failpoint } from '../../failpoint.js';
import { type DecodedIdentity, encodePrivateJwk, unknownNames } from '../../identity/index.js';
import { type IdentitySummary, recordEvent, secretIdentityEvent } from '../../kube/events.js';
import {
  apiStatus,
  buildIdentitySecret,
  type IdentitySecretState,
  kubeFailure,
  readIdentitySecret,
  SECRET_KEYS,
  type SecretLayout,
  type SecretRef,
  writeIdentitySecret,
} from '../../kube/index.js';
import type { SecretWhere } from '../../results/identity.js';
import type { ClusterSession } from '../../kube/cluster-session.js';
import { commandLine } from '../../command-line.js';
import {
  type CurrentIdentity,
  type EnrollmentNaming,
  type IdentityTarget,
  type NewIdentity,
  type PendingKeys,
  type Preflight,
  type RestoreOutcome,
  summaryOf,
  type TargetFacts,
  type TargetKind,
  type TargetLock,
  type VerifiedMark,
  type WriteOutcome,
} from '../target.js';
import { Deadline, isoString, isRfc3339 } from '../../time/index.js';
import { parseVerifiedRecord, previousToKeep } from '../../storage/index.js';
import { utcStamp } from '../../storage/recovery-files.js';
import { amendPendingRecord, readPendingRecord } from '../../storage/pending-key.js';
import { verifiedMarkOf } from '../verified-mark.js';
import { keptPreviousLine, secretWriteOutcomeUnknown, unverifiedNotKeptWarning } from './secret-messages.js';
import { asideEntries, asideKeyOf, isAsideKey, listSecretOrphans, PENDING_KEY, pendingRecord, secretKeyLabel } from './secret-pending.js';
import { splitPending } from '../orphans.js';

// What the two Secret-held identities share (the cluster agent's Secret, the Helm runner's Secret):
// a read that remembers the resourceVersion, the server-side dry run of the very write, the guarded
// write, the read back, and the swap with the previous identity.

function orphanedRunner(err: ParError, urn: string): ParError {
  const hint = `${err.hint} The new runner ${urn} was enrolled but is not stored anywhere: remove it in Datadog.`;
  if (err instanceof ConflictError) {
    return new ConflictError(
      `${err.message} — someone else changed the Secret between our read and our write; it was not overwritten`,
      hint,
      { ...err.details, orphanedUrn: urn },
    );
  }
  if (err instanceof KubernetesError) return new KubernetesError(err.code, err.message, hint, { ...err.details, orphanedUrn: urn });
  return err;
}

/**
 * Data keys of the cluster agent's Secret this tool knows: the agent's (docs/protocol.md §6) and its
 * own (previous_*, the pending key, keys set aside). Any other is a newer agent's: the agent's Secret
 * is written wholesale, so a write would drop it.
 */
const KNOWN_AGENT_SECRET_KEYS = new Set<string>([...Object.values(SECRET_KEYS), PENDING_KEY]);
const knownAgentSecretKey = (key: string) => KNOWN_AGENT_SECRET_KEYS.has(key) || isAsideKey(key);

/** Written with every rotation and rollback: when the identity in service was put there. */
const ROTATED_AT_ANNOTATION = 'par-identity.datadoghq.com/rotated-at';

/**
 * The identity that last passed the signed health check, as JSON {fingerprint, urn, verifiedAt}
 * (docs/identity-lifecycle.md §1); the agent reads data keys only.
 */
const LAST_VERIFIED_ANNOTATION = 'par-identity.datadoghq.com/last-verified';

function lastVerifiedOf(secret: V1Secret): VerifiedMark | undefined {
  const value = secret.metadata?.annotations?.[LAST_VERIFIED_ANNOTATION];
  if (!value || value.length > 4096) return undefined;
  try {
    return parseVerifiedRecord(JSON.parse(value));
  } catch {
    return undefined;
  }
}

/** RFC 3339 without fractions, as Kubernetes writes times. */
function rfc3339(date: Date): string {
  return isoString(date).replace(/\.\d{3}Z$/, 'Z');
}

/** The annotation, else the newest managedFields time (a Secret written by the Go agent has no annotation). */
export function rotatedAtOf(secret: V1Secret): { at: string; source: string } | undefined {
  const annotated = secret.metadata?.annotations?.[ROTATED_AT_ANNOTATION];
  if (annotated && isRfc3339(annotated)) return { at: annotated, source: `annotation ${ROTATED_AT_ANNOTATION}` };
  const times = (secret.metadata?.managedFields ?? [])
    .map((f) => (f.time ? new Date(f.time as unknown as string).getTime() : Number.NaN))
    .filter((t) => !Number.isNaN(t));
  if (times.length) return { at: rfc3339(new Date(Math.max(...times))), source: 'managedFields (last write by any manager)' };
  const created = secret.metadata?.creationTimestamp;
  return created ? { at: rfc3339(new Date(created as unknown as string)), source: 'creationTimestamp' } : undefined;
}

/** The Secret to write, stamped with the time the identity goes in service. */
function stamped(secret: V1Secret, now: Date): V1Secret {
  return {
    ...secret,
    metadata: { ...secret.metadata, annotations: { ...(secret.metadata?.annotations ?? {}), [ROTATED_AT_ANNOTATION]: rfc3339(now) } },
  };
}

/** Read-backs after a write of unknown outcome: at most this many, each on a new connection, within the deadline. */
const SETTLE_ATTEMPTS = 6;
const SETTLE_FIRST_WAIT_MS = 200;
const SETTLE_MAX_WAIT_MS = 3_000;

/** A write whose outcome the answer does not tell: 5xx, timeout, dropped connection (4xx is a definite no). */
function outcomeUnknown(err: unknown): boolean {
  const { code } = apiStatus(err);
  return code === undefined || code >= 500;
}

export abstract class SecretTargetBase implements IdentityTarget {
  abstract readonly kind: TargetKind;
  abstract readonly flavor: AgentFlavor;
  abstract readonly selector: string[];
  readonly label: string;
  readonly where: SecretWhere;
  /** The Secret as last read: the resourceVersion of this read guards the write. */
  protected state: IdentitySecretState | undefined;

  constructor(
    readonly config: AgentConfig,
    readonly session: ClusterSession,
    readonly ref: SecretRef,
    readonly layout: SecretLayout,
    readonly keepPrevious: boolean,
    protected readonly now: () => Date,
  ) {
    this.label = `Secret ${ref.namespace}/${ref.name}`;
    this.where = { namespace: ref.namespace, secretName: ref.name };
  }

  /** A missing Secret: created by a rotation (cluster agent) or refused (Helm runner). */
  protected abstract whenMissing(): Promise<CurrentIdentity>;
  /** The runner's naming, and the target's own write checks besides the Secret's: no side effect. */
  protected abstract naming(): Promise<{ naming: EnrollmentNaming; notes: string[]; warnings: string[] }>;
  /** Data keys written besides the identity (orch_cluster_id, api_key_hash, ...). */
  protected abstract extraValues(next: NewIdentity): Record<string, string>;
  /** What the target writes besides the Secret, once the Secret holds the new identity; never fatal (the runner is enrolled and stored). */
  protected async afterWrite(): Promise<{ notes: string[]; warnings: string[] }> {
    return { notes: [], warnings: [] };
  }
  abstract restartAdvice(): string;
  abstract restartCommand(): string;

  protected get core() {
    return this.session.core;
  }

  /** The audit trail in the cluster: an Event on the Secret; a token without the right gets a warning, never a failure. */
  protected async audit(
    change: 'rotated' | 'rolled back',
    secret: V1Secret,
    current: IdentitySummary,
    previous: DecodedIdentity | undefined,
  ): Promise<string[]> {
    const subject = { ...this.ref, ...(secret.metadata?.uid ? { uid: secret.metadata.uid } : {}) };
    const before = previous ? { urn: previous.record.urn, fingerprint: previous.key.kid } : {};
    const result = await recordEvent(this.session.conn, secretIdentityEvent(change, subject, current, before));
    return result.recorded ? [] : [result.warning];
  }

  async lock(): Promise<TargetLock> {
    return {
      release: async () => undefined,
      notes: ['no lock file: the resourceVersion read now guards the write (a concurrent writer gets 409)'],
      warnings: [],
    };
  }

  /**
   * The pending key in the Secret itself (docs/identity-lifecycle.md §3); none for a Secret this run
   * would create: its key is held in memory only until the create.
   */
  get pending(): PendingKeys | undefined {
    const state = this.state;
    if (state?.state !== 'present') return undefined;
    const held = [state.identity?.key.kid, state.previous?.key.kid].filter((k): k is string => Boolean(k));
    return {
      where: `${this.label} (data key ${PENDING_KEY})`,
      keep: (key, meta) =>
        this.rewrite('keeping the pending key in', (data) => {
          data[PENDING_KEY] = pendingRecord(encodePrivateJwk(key), meta);
        }),
      amend: async (change) => {
        const now = this.state;
        const amended =
          now?.state === 'present' && PENDING_KEY in now.data ? amendPendingRecord(now.data[PENDING_KEY] ?? '', change) : undefined;
        if (amended) {
          await this.rewrite(
            'recording what the run learnt of the pending key in',
            (data) => {
              data[PENDING_KEY] = amended;
            },
            'The identity in the Secret is unchanged; the pending key stays as it was.',
          );
        }
      },
      read: async () => {
        const now = this.state;
        return now?.state === 'present' && PENDING_KEY in now.data ? readPendingRecord(now.data[PENDING_KEY] ?? '') : undefined;
      },
      clear: async () => {
        if (this.state?.state === 'present' && PENDING_KEY in this.state.data) {
          await this.rewrite('removing the pending key from', (data) => {
            delete data[PENDING_KEY];
          });
        }
      },
      setAside: async (now) => {
        const found = listSecretOrphans(this.ref, state.data, []).find((o) => o.state === 'pending');
        if (!found) return undefined;
        // Interrupted after the write: the key is in service (or the previous one), nothing is orphaned.
        if (found.fingerprint && held.includes(found.fingerprint)) {
          await this.rewrite('removing the pending key from', (data) => {
            delete data[PENDING_KEY];
          });
          return undefined;
        }
        let aside = '';
        await this.rewrite('setting the pending key aside in', (data) => {
          aside = asideKeyOf(utcStamp(now), data);
          data[aside] = data[PENDING_KEY] ?? '';
          delete data[PENDING_KEY];
        });
        return { ...found, path: secretKeyLabel(this.ref, aside), state: 'set aside' };
      },
      list: async () => listSecretOrphans(this.ref, state.data, held, this.now().getTime()),
    };
  }

  /** A guarded update of the data alone (no rotated-at stamp); this run's later write is guarded by its result. */
  private async rewrite(
    what: string,
    change: (data: Record<string, string>) => void,
    hint = 'Nothing was enrolled; the identity in the Secret is unchanged.',
  ): Promise<void> {
    const state = this.secretState();
    if (state.state !== 'present') return;
    const data = { ...state.data };
    change(data);
    let written: V1Secret;
    try {
      // `data` is the whole of it: nothing of the old data is merged back (the key removed stays removed).
      written = await writeIdentitySecret(
        this.core,
        this.ref,
        buildIdentitySecret(this.ref, state.secret, data, { ...this.layout, keepOtherKeys: false }),
        { create: false, dryRun: false },
      );
    } catch (err) {
      throw kubeFailure(err, `${what} ${this.label}`, hint);
    }
    this.state = { ...state, secret: written, resourceVersion: written.metadata?.resourceVersion ?? state.resourceVersion, data };
  }

  async read(): Promise<CurrentIdentity> {
    const state = await readIdentitySecret(this.core, this.ref, this.layout);
    this.state = state;
    if (state.state === 'missing') return this.whenMissing();
    const current: CurrentIdentity = { state: state.identity ? 'ok' : 'corrupt', notes: [], warnings: [] };
    const rotatedAt = rotatedAtOf(state.secret);
    if (rotatedAt) {
      current.rotatedAt = rotatedAt.at;
      current.rotatedAtSource = rotatedAt.source;
    }
    if (state.identity) {
      current.identity = state.identity;
      current.notes.push(
        `current: ${state.identity.record.urn} (fingerprint ${state.identity.key.kid}, resourceVersion ${state.resourceVersion})`,
      );
    } else {
      if (state.error) current.problem = state.error;
      const stays = state.previous ? ', and the valid previous identity already there stays' : '';
      current.warnings.push(
        `the Secret's current identity does not decode (${state.error?.message}); ` +
          `it is not kept as ${this.layout.previousPrivateKey}${stays}`,
      );
    }
    if (state.previous) current.previous = state.previous;
    // A Secret that keeps the keys it does not own (the Helm runner's: every key is an env var) loses none.
    if (!this.layout.keepOtherKeys) {
      const unknown = unknownNames(Object.keys(state.data), knownAgentSecretKey);
      if (unknown.length) current.unknownFields = unknown;
    }
    const lastVerified = lastVerifiedOf(state.secret);
    if (lastVerified) current.lastVerified = lastVerified;
    return current;
  }

  private secretState(): IdentitySecretState {
    if (!this.state) throw new Error('read() must run before a write');
    return this.state;
  }

  async preflight(): Promise<Preflight> {
    const named = await this.naming();
    const state = this.secretState();
    const create = state.state === 'missing';
    const existing = state.state === 'present' ? state.secret : undefined;
    // The apiserver checks RBAC and admission for the exact write, before a runner exists in Datadog.
    try {
      await writeIdentitySecret(
        this.core,
        this.ref,
        buildIdentitySecret(this.ref, existing, state.state === 'present' ? state.data : {}, this.layout),
        { create, dryRun: true },
      );
    } catch (err) {
      throw kubeFailure(
        err,
        `server-side dry run of the ${create ? 'create' : 'update'} of ${this.label}`,
        'Nothing was enrolled and nothing was changed.',
      );
    }
    failpoint('after-secret-read');
    return {
      naming: named.naming,
      notes: [...named.notes, `server-side dry run of the ${create ? 'create' : 'update'}: allowed`],
      warnings: named.warnings,
    };
  }

  describeWrite(): string {
    const state = this.secretState();
    if (state.state === 'missing') return `create ${this.label}`;
    const keeping = this.keepPrevious
      ? `, keeping the current identity as ${this.layout.previousUrn} / ${this.layout.previousPrivateKey}`
      : '';
    return `update ${this.label} guarded by resourceVersion ${state.resourceVersion}${keeping}`;
  }

  async write(current: CurrentIdentity, next: NewIdentity): Promise<WriteOutcome> {
    const state = this.secretState();
    const created = state.state === 'missing';
    const { layout } = this;
    // Keys set aside by earlier runs stay until the operator removes them; the pending key goes with this write.
    const aside = state.state === 'present' ? asideEntries(state.data) : {};
    const values: Record<string, string> = {
      ...aside,
      [layout.privateKey]: encodePrivateJwk(next.key),
      [layout.urn]: next.urn,
      ...this.extraValues(next),
    };
    // The identity in service becomes the previous one; when it is corrupt, or never passed
    // verification while the previous one did, the previous identity stays (docs/identity-lifecycle.md §2).
    const { kept, unverifiedDropped } = previousToKeep(current, current.lastVerified);
    const previousKept = this.keepPrevious && Boolean(kept);
    if (previousKept && kept) {
      values[layout.previousPrivateKey] = kept.record.privateKey;
      values[layout.previousUrn] = kept.record.urn;
    }
    let written: V1Secret;
    const outcomeWarnings: string[] = [];
    try {
      const body = stamped(buildIdentitySecret(this.ref, state.state === 'present' ? state.secret : undefined, values, layout), this.now());
      // In the same write: the new identity is the one a later rotation must not keep until its check passes.
      // Proven before the write, the new identity is the verified one, in the same write (docs/identity-lifecycle.md §1).
      const mark = next.verifiedAt
        ? verifiedMarkOf(next, next.verifiedAt)
        : current.lastVerified && { ...current.lastVerified, unverified: next.key.kid };
      if (mark && body.metadata?.annotations) body.metadata.annotations[LAST_VERIFIED_ANNOTATION] = JSON.stringify(mark);
      // A Secret that keeps other keys (Helm) would carry over previous keys that hold no valid identity
      // (the chart's placeholder): only an identity kept above is ever a previous one.
      if (!previousKept && body.data) {
        delete body.data[layout.previousPrivateKey];
        delete body.data[layout.previousUrn];
      }
      if (body.data) delete body.data[PENDING_KEY];
      written = await writeIdentitySecret(this.core, this.ref, body, { create: created, dryRun: false });
    } catch (err) {
      const failure = kubeFailure(err, `${created ? 'creating' : 'updating'} ${this.label}`, 'The Secret was not changed.');
      if (!outcomeUnknown(err)) throw orphanedRunner(failure, next.urn);
      // The request may have been applied: read the Secret back and decide, never guess.
      const settled = await this.settle(
        state,
        { urn: next.urn, fingerprint: next.key.kid },
        failure,
        `the rotation to ${next.urn}`,
        next.urn,
      );
      if (!settled) throw orphanedRunner(failure, next.urn);
      written = settled;
      outcomeWarnings.push(
        `the ${created ? 'create' : 'update'} answered "${failure.message}", but reading the Secret back shows the new identity: it was applied`,
      );
    }
    const resourceVersion = written.metadata?.resourceVersion ?? '';
    if (state.state === 'present') {
      const data = { ...state.data };
      delete data[PENDING_KEY];
      this.state = { ...state, secret: written, resourceVersion, data };
    }
    const after = await this.afterWrite();
    return {
      previousKept,
      notes: after.notes,
      warnings: [
        ...outcomeWarnings,
        ...(previousKept && unverifiedDropped ? [unverifiedNotKeptWarning(unverifiedDropped.record.urn, layout, kept?.record.urn)] : []),
        ...after.warnings,
        ...(await this.audit('rotated', written, { urn: next.urn, fingerprint: next.key.kid }, current.identity)),
      ],
      data: { resourceVersion, action: created ? 'created' : 'updated', previousKept },
      lines: [
        ...(previousKept
          ? [
              keptPreviousLine(kept?.record.urn, layout, {
                currentDecodes: current.identity !== undefined,
                unverifiedDropped: unverifiedDropped !== undefined,
              }),
            ]
          : []),
        `  secret:       ${this.ref.namespace}/${this.ref.name} ${created ? 'created' : 'updated'} (resourceVersion ${resourceVersion})`,
      ],
    };
  }

  /**
   * After a write whose outcome is unknown (5xx, timeout, reset): the Secret read back decides.
   * Returns the Secret when it holds `wanted` (applied), undefined when it is as we read it (not
   * applied), and throws OUTCOME_UNKNOWN when it is neither or cannot be read.
   */
  private async settle(
    before: IdentitySecretState,
    wanted: IdentitySummary,
    failure: ParError,
    what: string,
    enrolledUrn?: string,
  ): Promise<V1Secret | undefined> {
    const after = await this.readOnNewConnections().catch(() => undefined);
    if (after?.state === 'present' && after.identity?.record.urn === wanted.urn && after.identity?.key.kid === wanted.fingerprint)
      return after.secret;
    const unchanged =
      after !== undefined &&
      (after.state === 'missing'
        ? before.state === 'missing'
        : before.state === 'present' && after.resourceVersion === before.resourceVersion);
    if (unchanged) return undefined;
    const check = commandLine([programName(), 'status', ...this.selector]);
    throw secretWriteOutcomeUnknown({
      what,
      label: this.label,
      apiAnswer: failure.message,
      readBack: after !== undefined,
      check,
      ref: this.ref,
      enrolledUrn,
    });
  }

  /**
   * The Secret read again after a write (of known or unknown outcome), each attempt on a new
   * connection (the one a 5xx came on may be closing), until one answers or the deadline (--timeout)
   * or the attempts run out; a definite refusal (4xx) is not retried. Throws the last failure when
   * none answered (docs/safety.md).
   */
  private async readOnNewConnections(): Promise<IdentitySecretState> {
    const conn = this.session.conn;
    // The run's deadline, its clock included: the waits between reads are on the run's clock.
    const deadline = conn.limits.deadline ?? Deadline.never();
    const remaining = () => deadline.remainingMs();
    let waitMs = SETTLE_FIRST_WAIT_MS;
    for (let attempt = 1; ; attempt++) {
      conn.transport().dropIdleConnections();
      try {
        return await readIdentitySecret(this.core, this.ref, this.layout);
      } catch (err) {
        const status = err instanceof ParError ? err.details.httpStatus : undefined;
        const definite = typeof status === 'number' && status >= 400 && status < 500 && status !== 429;
        if (definite || attempt >= SETTLE_ATTEMPTS || remaining() <= waitMs || conn.limits.signal?.aborted) throw err;
      }
      await deadline.sleep(waitMs, conn.limits.signal);
      waitMs = Math.min(waitMs * 2, SETTLE_MAX_WAIT_MS);
    }
  }

  async readBack(next: NewIdentity): Promise<DecodedIdentity> {
    const readBack = await this.readOnNewConnections();
    if (
      readBack.state !== 'present' ||
      !readBack.identity ||
      readBack.identity.record.urn !== next.urn ||
      readBack.identity.key.kid !== next.key.kid
    ) {
      throw new StorageError(
        'READ_BACK_MISMATCH',
        `${this.label} does not read back as written (someone changed it after our write?)`,
        `Inspect it with \`kubectl -n ${this.ref.namespace} get secret ${this.ref.name}\`.`,
        { urn: next.urn },
      );
    }
    return readBack.identity;
  }

  /** The Secret's data with the previous identity in service and the current one as the previous; NO_BACKUP when there is none. */
  private swapped(state: IdentitySecretState): {
    state: Extract<IdentitySecretState, { state: 'present' }>;
    previous: DecodedIdentity;
    values: Record<string, string>;
  } {
    const { layout } = this;
    if (state.state === 'missing' || !state.previous) {
      throw new StorageError(
        'NO_BACKUP',
        `${this.label} keeps no previous identity to roll back to`,
        `Nothing was changed. A previous identity (${layout.previousUrn} / ${layout.previousPrivateKey}) ` +
          'is kept only by a rotation without --no-keep-previous.',
      );
    }
    const values: Record<string, string> = { ...state.data };
    values[layout.privateKey] = state.previous.record.privateKey;
    values[layout.urn] = state.previous.record.urn;
    if (state.identity) {
      values[layout.previousPrivateKey] = state.identity.record.privateKey;
      values[layout.previousUrn] = state.identity.record.urn;
    } else {
      delete values[layout.previousPrivateKey];
      delete values[layout.previousUrn];
    }
    return { state, previous: state.previous, values };
  }

  async planRestore(): Promise<string> {
    const { state, previous, values } = this.swapped(this.secretState());
    try {
      await writeIdentitySecret(
        this.core,
        this.ref,
        stamped(buildIdentitySecret(this.ref, state.secret, values, this.layout), this.now()),
        { create: false, dryRun: true },
      );
    } catch (err) {
      throw kubeFailure(err, `server-side dry run of the update of ${this.label}`, 'Nothing was changed.');
    }
    const replaced = state.identity
      ? `${state.identity.record.urn} kept as ${this.layout.previousUrn}`
      : `the current identity (it does not decode) dropped`;
    return (
      `update ${this.label} guarded by resourceVersion ${state.resourceVersion}: ${previous.record.urn} back in service, ${replaced} ` +
      '(server-side dry run: allowed)'
    );
  }

  async restore(): Promise<RestoreOutcome> {
    const { state, previous, values } = this.swapped(await readIdentitySecret(this.core, this.ref, this.layout));
    const { layout } = this;
    let written: V1Secret;
    try {
      written = await writeIdentitySecret(
        this.core,
        this.ref,
        stamped(buildIdentitySecret(this.ref, state.secret, values, layout), this.now()),
        { create: false, dryRun: false },
      );
    } catch (err) {
      const failure = kubeFailure(
        err,
        `updating ${this.label}`,
        'The Secret was not changed; read it again with `par-identity status` and retry.',
      );
      if (!outcomeUnknown(err)) throw failure;
      const settled = await this.settle(
        state,
        { urn: previous.record.urn, fingerprint: previous.key.kid },
        failure,
        `the rollback to ${previous.record.urn}`,
      );
      if (!settled) throw failure;
      written = settled;
    }
    const replacedUrn = state.identity?.record.urn ?? null;
    return {
      restored: previous,
      replacedUrn,
      warnings: await this.audit('rolled back', written, { urn: previous.record.urn, fingerprint: previous.key.kid }, state.identity),
      data: { resourceVersion: written.metadata?.resourceVersion ?? null },
      lines: [`  replaced:     ${replacedUrn ?? '(no decodable identity)'}, now kept as ${layout.previousUrn}`],
    };
  }

  async recordVerified(identity: DecodedIdentity, at: Date): Promise<{ resourceVersion?: string }> {
    const state = await readIdentitySecret(this.core, this.ref, this.layout);
    // Only the identity that passed is marked: a Secret changed since is left alone.
    if (state.state !== 'present' || state.identity?.key.kid !== identity.key.kid)
      throw new Error(`${this.label} no longer holds ${identity.record.urn}`);
    const record: VerifiedMark = { fingerprint: identity.key.kid, urn: identity.record.urn, verifiedAt: isoString(at) };
    const { secret } = state;
    const body: V1Secret = {
      ...secret,
      metadata: {
        ...secret.metadata,
        annotations: { ...(secret.metadata?.annotations ?? {}), [LAST_VERIFIED_ANNOTATION]: JSON.stringify(record) },
      },
    };
    const written = await writeIdentitySecret(this.core, this.ref, body, { create: false, dryRun: false });
    return written.metadata?.resourceVersion ? { resourceVersion: written.metadata.resourceVersion } : {};
  }

  async facts(current: CurrentIdentity): Promise<TargetFacts> {
    const state = this.secretState();
    const previous = summaryOf(current.previous);
    const resourceVersion = state.state === 'present' ? state.resourceVersion : null;
    const held = [current.identity?.key.kid, current.previous?.key.kid].filter((k): k is string => Boolean(k));
    return {
      // A live rotation's key is no orphan: the pending record names its holder.
      ...splitPending(state.state === 'present' ? listSecretOrphans(this.ref, state.data, held, this.now().getTime()) : []),
      data: {
        resourceVersion,
        previous,
        labels: state.state === 'present' ? (state.secret.metadata?.labels ?? {}) : {},
        ...this.extraFacts(state),
      },
      lines: [
        `  secret:       ${this.ref.namespace}/${this.ref.name} (resourceVersion ${resourceVersion})`,
        `  previous:     ${previous ? `${previous.urn}  fingerprint ${previous.fingerprint}` : '(none kept)'}`,
        ...this.extraFactLines(state),
      ],
      warnings: [],
    };
  }

  protected extraFacts(_state: IdentitySecretState): { clusterId?: string | null } {
    return {};
  }

  protected extraFactLines(_state: IdentitySecretState): string[] {
    return [];
  }
}
