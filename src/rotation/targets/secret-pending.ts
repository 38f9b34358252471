import type { SecretRef } from '../../kube/index.js';
import type { PossibleOrphan } from '../../results/status.js';
import { describePendingRecord, encodePendingRecord } from '../../storage/pending-key.js';
import { isoString } from '../../time/index.js';
import type { PendingMeta } from '../target.js';

// The pending key of a Secret-held identity (docs/identity-lifecycle.md §3): kept in the identity
// Secret itself, in a data key the agent never reads (it reads `private_key`/`urn`, or the Helm
// runner's `RUNNER_PRIVATE_KEY`/`RUNNER_URN`), written by an update guarded by the resourceVersion
// just read, before the enrollment request leaves. Data, not an annotation: `kubectl describe`
// prints annotations but only the sizes of data values. A later rotation that finds it moves it to
// `orphan_private_key.<UTC stamp>`, which no write of the tool drops; status lists both.

export const PENDING_KEY = 'pending_private_key';
const ASIDE_PREFIX = 'orphan_private_key.';

/** The same JSON record as the file target's `<identity>.pending`. */
export function pendingRecord(privateKey: string, meta: PendingMeta): string {
  return encodePendingRecord({
    privateKey,
    createdAt: isoString(meta.createdAt),
    runnerName: meta.runnerName,
    enrollmentUrl: meta.enrollmentUrl,
    ...(meta.holder ? { holder: meta.holder } : {}),
  });
}

export function asideKeyOf(stamp: string, taken: Record<string, string>): string {
  const base = `${ASIDE_PREFIX}${stamp}`;
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!(candidate in taken)) return candidate;
  }
}

/** How a possible orphan in a Secret is named (describeOrphan turns it into the kubectl patch that removes only that key). */
export function secretKeyLabel(ref: SecretRef, key: string): string {
  return `Secret ${ref.namespace}/${ref.name} key ${key}`;
}

/** The pending key (with its holder), then those set aside (oldest first); a key `held` (current or previous identity) is no orphan. */
export function listSecretOrphans(
  ref: SecretRef,
  data: Record<string, string>,
  held: readonly string[],
  nowMs = Date.now(),
): PossibleOrphan[] {
  const entries: Array<[string, PossibleOrphan['state']]> = [
    ...(PENDING_KEY in data ? [[PENDING_KEY, 'pending'] as [string, PossibleOrphan['state']]] : []),
    ...Object.keys(data)
      .filter((k) => k.startsWith(ASIDE_PREFIX))
      .sort()
      .map((k) => [k, 'set aside'] as [string, PossibleOrphan['state']]),
  ];
  return entries
    .map(([key, state]) => describePendingRecord(data[key] ?? '', secretKeyLabel(ref, key), state, nowMs))
    .filter((o) => !(o.fingerprint && held.includes(o.fingerprint)));
}

/** A data key of a set-aside key (`orphan_private_key.<stamp>`). */
export function isAsideKey(key: string): boolean {
  return key.startsWith(ASIDE_PREFIX);
}

/** The data keys of set-aside keys, carried over by every write (the cluster agent's layout replaces data whole). */
export function asideEntries(data: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).filter(([k]) => isAsideKey(k)));
}
