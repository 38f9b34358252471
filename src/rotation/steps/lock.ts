import { ParError } from '../../errors.js';
import { need, type Run, type Step } from '../run.js';

/**
 * A writing run holds the target's lock until it ends (the runner releases it). A reading run takes
 * it only to finish what a crashed run left (the sweep keeps every identity) and lets it go at once;
 * when a live run holds it, it just reads.
 */
export const lock: Step = {
  name: 'lock',
  title: 'lock the target',
  async run(r) {
    const { target } = need(r.resolved, 'target');
    if (r.spec.access === 'read') return sweepIfFree(r);
    // A stop signal ends a --wait-lock wait at once.
    r.lock = await target.lock(r.spec.options.waitLockSeconds ?? 0, r.requests ? { signal: r.requests } : {});
    for (const note of r.lock.notes) r.report.info(note);
    for (const warning of r.lock.warnings) r.report.warn(warning);
  },
  async plan(r) {
    // Taken and held like a real run, so the dry run fails (LOCKED) where the real run would.
    await lock.run(r);
    return `${need(r.lock, 'lock').notes.join('; ')} — free now; a real run holds it until it ends`;
  },
};

/**
 * Why a reading run may not be able to take the lock at all: it needs to create the lock file beside the
 * identity, and a read-only mount, a directory of another user or one it must refuse to write to does
 * not stop anyone from reading (status never requires write access).
 */
const CANNOT_WRITE_HERE: ReadonlySet<string> = new Set([
  'DIRECTORY_NOT_WRITABLE',
  'READ_ONLY_FILESYSTEM',
  'DIRECTORY_MISSING',
  'DIRECTORY_UNSAFE',
  'WRITE_FAILED',
]);

async function sweepIfFree(r: Run): Promise<void> {
  const { target } = need(r.resolved, 'target');
  // A stale lock is not taken over by a reading run: status lists it (leftovers) and the next writing
  // run takes it over; the file target still sweeps, no live process holding the lock.
  const held = await target.lock(0, { takeOver: false }).catch((err: unknown) => {
    if (err instanceof ParError && err.code === 'LOCKED') {
      // The message names the holder, or says the lock names none (a planted or foreign lock).
      r.report.info(`${err.message}: reading without the sweep`);
      return undefined;
    }
    if (err instanceof ParError && CANNOT_WRITE_HERE.has(err.code)) {
      r.report.info(`no lock taken, reading only (${err.message}): files an interrupted run may have left are listed, not cleaned up`);
      return undefined;
    }
    throw err;
  });
  for (const note of held?.notes.filter((n) => n.includes('is stale')) ?? []) r.report.info(note);
  for (const warning of held?.warnings ?? []) r.report.warn(warning);
  await held?.release();
}
