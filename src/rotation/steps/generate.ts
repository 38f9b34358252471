import { ParError } from '../../errors.js';
import { generateIdentityKey } from '../../identity/index.js';
import type { PossibleOrphan } from '../../results/status.js';
import { describeOrphan } from '../orphans.js';
import { need, type Step } from '../run.js';
import type { IdentityTarget } from '../target.js';

/**
 * A pending key whose run is still under way belongs to that run, not to an orphan to set aside
 * (docs/identity-lifecycle.md §3): refused as a held lock is. A file's lock already keeps a second run
 * out; a Secret has no lock file, and its pending record is the only sign of a rotation under way.
 */
async function refuseLiveRotation(target: IdentityTarget): Promise<void> {
  const live = (await target.pending?.list())?.find((o): o is PossibleOrphan & { holder: NonNullable<PossibleOrphan['holder']> } => o.state === 'pending' && o.holder?.lives === true);
  if (!live) return;
  const until = live.holder.deadline ? ` (its deadline: ${live.holder.deadline})` : '';
  throw new ParError(
    'LOCKED',
    `${target.label} is being rotated by another run: ${live.holder.why}; it keeps the key ${live.fingerprint} pending in ${live.path}`,
    `Nothing was changed: ${target.label} is untouched and nothing was enrolled. Wait for that run to end${until}, then run again; \`par-identity status\` says when it is over.`,
    { pending: live.path, pid: live.holder.pid, host: live.holder.host, ...(live.holder.deadline ? { deadline: live.holder.deadline } : {})},
  );
}

export const generate: Step = {
  name: 'generate',
  title: 'generate a key',
  async run(r) {
    // An interrupted run's pending key is never reused: whether the server registered it cannot be
    // asked, nor how a second enrollment of it would be taken. It is kept aside and reported
    // (docs/identity-lifecycle.md §3).
    const { target } = need(r.resolved, 'target');
    await refuseLiveRotation(target);
    const aside = await target.pending?.setAside(r.io.now());
    if (aside) r.report.warn(`a run interrupted after sending a key for enrollment left ${describeOrphan(aside)}`);
    r.key = generateIdentityKey();
  },
  async plan(r) {
    const { target } = need(r.resolved, 'target');
    const { pending } = target;
    // Fails where the real run would.
    await refuseLiveRotation(target);
    const found = (await pending?.list())?.find((o) => o.state === 'pending');
    const aside = found ? `; would first keep the pending key of an interrupted run aside (${describeOrphan(found)})` : '';
    return `would generate a fresh ECDSA P-256 key with node:crypto (kept in memory${pending ? `, and as pending in ${pending.where} while it is enrolled` : ' only'})${aside}`;
  },
};
