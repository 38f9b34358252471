import { KubernetesError } from '../../errors.js';
import { rotationDue } from '../age.js';
import type { RotationOptions, RunOptions } from '../options.js';
import { need, type Run, type Step } from '../run.js';
import type { CurrentIdentity } from '../target.js';

/** What the target holds now, and the identity a rollback would restore; with --if-older-than, whether a rotation is due. */
export const read: Step<RunOptions & Pick<RotationOptions, 'ifOlderThanSeconds'>> = {
  name: 'read',
  title: 'read the current identity',
  async run(r) {
    r.current = await readCurrent(r);
    // The notes say what a change would do with what was read: a reading run has nothing to say.
    if (r.spec.access === 'write') {
      for (const note of r.current.notes) r.report.info(note);
      for (const warning of r.current.warnings) r.report.warn(warning);
    }
    const threshold = r.spec.options.ifOlderThanSeconds;
    if (threshold !== undefined) {
      const due = rotationDue(r.current, threshold, r.io.now());
      r.report.info(`--if-older-than: ${due.due ? 'due' : 'not due'}: ${due.reason}`);
      if (!due.due) r.skipped = { reason: due.reason, ageSeconds: due.ageSeconds };
    }
  },
  async plan(r) {
    await read.run(r);
    return describeCurrent(need(r.current, 'current identity'));
  },
};

function readCurrent(r: Run): Promise<CurrentIdentity> {
  return need(r.resolved, 'target')
    .target.read()
    .catch((err: unknown) => {
      // A reader reports a missing Secret as missing, rather than as a rotation would (create or refuse).
      if (r.spec.access === 'read' && err instanceof KubernetesError && err.code === 'SECRET_MISSING') return { state: 'missing', notes: [], warnings: [] };
      throw err;
    });
}

function describeCurrent(current: CurrentIdentity): string {
  if (current.state === 'ok' && current.identity) return `current identity ${current.identity.record.urn} (fingerprint ${current.identity.key.kid})`;
  if (current.state === 'corrupt') return `current identity does not decode (${current.problem?.message ?? 'corrupt'}); it would be kept, not used`;
  return 'no identity yet: a first one would be enrolled';
}
