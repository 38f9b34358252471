import { ParError } from '../../errors.js';
import { need, type Step } from '../run.js';

/** The new identity into the target, through the target's own guard (atomic rename / resourceVersion). */
export const write: Step = {
  name: 'write',
  title: 'write the new identity',
  atomic: true,
  async run(r) {
    const { target } = need(r.resolved, 'target');
    r.change = 'rotated';
    const next = need(r.next, 'new identity');
    r.written = await target.write(need(r.current, 'current identity'), next).catch((err: unknown) => {
      // OUTCOME_UNKNOWN is the run's one verdict: the new runner may be the one in service, so no
      // advice to remove it (its hint says to check first; docs/safety.md).
      if (err instanceof ParError && err.code === 'OUTCOME_UNKNOWN') throw err;
      const { pending } = target;
      if (pending) {
        r.report.warn(
          `${next.urn} was enrolled but not written: its key stays pending in ${pending.where}, ` +
            `unless the change that beat this write removed it (fingerprint ${next.key.kid}); ` +
            'remove that runner in Datadog, or rotate again (the next run reports it)',
        );
        // The same facts in --json (the error's details), not on stderr only.
        if (err instanceof ParError)
          Object.assign(err.details, { orphanedUrn: next.urn, orphanedFingerprint: next.key.kid, pendingKey: pending.where });
      }
      throw err;
    });
    // The identity now holds the key: it is pending no more (docs/identity-lifecycle.md §3).
    await target.pending
      ?.clear()
      .catch((err: unknown) =>
        r.report.warn(`could not remove the pending key: ${(err as Error).message}; it is the key now in service, delete it by hand`),
      );
    for (const note of r.written.notes) r.report.info(note);
    for (const warning of r.written.warnings) r.report.warn(warning);
  },
  async plan(r) {
    r.change = 'rotated';
    return `would ${need(r.resolved, 'target').target.describeWrite(need(r.current, 'current identity'))}`;
  },
};
