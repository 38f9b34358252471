import { enrollmentPath } from '../../enrollment/index.js';
import { ParError } from '../../errors.js';
import { decodePrivateJwk, generateIdentityKey, parseUrn } from '../../identity/index.js';
import type { PossibleOrphan } from '../../results/status.js';
import type { PendingKeyRead } from '../../storage/pending-key.js';
import { describeOrphan } from '../orphans.js';
import { need, type Run, type Step } from '../run.js';
import type { IdentityTarget } from '../target.js';

/**
 * A pending key whose run is still under way belongs to that run, not to an orphan to set aside
 * (docs/identity-lifecycle.md §3): refused as a held lock is. A file's lock already keeps a second run
 * out; a Secret has no lock file, and its pending record is the only sign of a rotation under way.
 */
async function refuseLiveRotation(target: IdentityTarget): Promise<void> {
  const live = (await target.pending?.list())?.find(
    (o): o is PossibleOrphan & { holder: NonNullable<PossibleOrphan['holder']> } => o.state === 'pending' && o.holder?.lives === true,
  );
  if (!live) return;
  const until = live.holder.deadline ? ` (its deadline: ${live.holder.deadline})` : '';
  throw new ParError(
    'LOCKED',
    `${target.label} is being rotated by another run: ${live.holder.why}; it keeps the key ${live.fingerprint} pending in ${live.path}`,
    `Nothing was changed: ${target.label} is untouched and nothing was enrolled. Wait for that run to end${until}, then run again; ` +
      `\`par-identity status\` says when it is over.`,
    {
      pending: live.path,
      pid: live.holder.pid,
      host: live.holder.host,
      ...(live.holder.deadline ? { deadline: live.holder.deadline } : {}),
    },
  );
}

/**
 * The pending key of an earlier run that enrolled it and then could not prove it (the health check
 * unavailable until its deadline, or the run stopped before or during the check): the runner it
 * registered is known by its URN, and no health check said no. This run verifies that same key again
 * and writes it if Datadog now accepts it, instead of enrolling another runner (docs/identity-lifecycle.md §3).
 * Not when the record was rejected, names no URN, or was enrolled at another endpoint than this run's.
 */
function resumable(r: Run, found: PendingKeyRead | undefined): PendingKeyRead | undefined {
  const ctx = need(r.ctx, 'enrollment context');
  if (!found?.urn || found.rejected) return undefined;
  // Interrupted after its write: the key is in service or kept as the previous one; the set-aside step removes the record.
  const current = need(r.current, 'current identity');
  if ([current.identity?.key.kid, current.previous?.key.kid].includes(found.fingerprint)) return undefined;
  if (found.enrollmentUrl !== `${ctx.endpoint.baseUrl}${enrollmentPath(ctx.apiKeyOnly)}`) return undefined;
  try {
    parseUrn(found.urn);
    return found;
  } catch {
    return undefined;
  }
}

export const generate: Step = {
  name: 'generate',
  title: 'generate a key',
  async run(r) {
    const { target } = need(r.resolved, 'target');
    const { pending } = target;
    // Another run's live pending key first: neither resumed nor set aside under its feet.
    await refuseLiveRotation(target);
    const resume = resumable(r, await pending?.read());
    if (resume?.urn) {
      const key = decodePrivateJwk(resume.privateKey);
      const ctx = need(r.ctx, 'enrollment context');
      const naming = need(r.preflight, 'pre-flight').naming;
      const runnerName = resume.runnerName ?? '';
      r.key = key;
      r.enrolled = { runnerId: parseUrn(resume.urn).runnerId, runnerName };
      r.next = {
        key,
        urn: resume.urn,
        apiKeyHash: ctx.apiKeyHash,
        ...(naming.hostname ? { hostname: naming.hostname } : {}),
        ...(runnerName ? { runnerName } : {}),
      };
      r.resumed = true;
      r.report.info(
        `an earlier run enrolled ${resume.urn}${runnerName ? ` ("${runnerName}")` : ''} and could not prove it: ` +
          `its key (fingerprint ${key.kid}) is kept pending in ${pending?.where}; ` +
          'this run verifies that key again and writes it if Datadog accepts it, without enrolling another runner',
      );
      return;
    }
    // Any other pending key is never reused: whether the server registered it cannot be asked (no URN),
    // or it registered a runner that the health check rejected. It is kept aside and reported
    // (docs/identity-lifecycle.md §3).
    const aside = await pending?.setAside(r.io.now());
    if (aside) {
      const run = aside.rejected ? 'a run whose new key the health check rejected' : 'a run interrupted after sending a key for enrollment';
      r.report.warn(`${run} left ${describeOrphan(aside)}`);
    }
    r.key = generateIdentityKey();
  },
  async plan(r) {
    const { target } = need(r.resolved, 'target');
    const { pending } = target;
    // Fails where the real run would.
    await refuseLiveRotation(target);
    const record = await pending?.read();
    const resume = resumable(r, record);
    if (resume)
      return (
        `would verify again the pending key of an earlier run (${resume.urn}, fingerprint ${resume.fingerprint}) ` +
        'and write it if Datadog accepts it, without enrolling another runner'
      );
    const found = (await pending?.list())?.find((o) => o.state === 'pending');
    const aside = found ? `; would first keep the pending key of an earlier run aside (${describeOrphan(found)})` : '';
    const kept = pending ? `memory, and as pending in ${pending.where} while it is enrolled and verified` : 'memory only';
    return `would generate a fresh ECDSA P-256 key with node:crypto (kept in ${kept})${aside}`;
  },
};
