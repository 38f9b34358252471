import { ConfigError, KubernetesError } from '../../errors.js';
import { rotationDue } from '../age.js';
import type { RotationInput, RunOptions } from '../../command-options.js';
import { need, type Run, type Step } from '../run.js';
import type { CurrentIdentity } from '../target.js';

/** What the target holds now, and the identity a rollback would restore; with --if-older-than, whether a rotation is due. */
export const read: Step<RunOptions & Pick<RotationInput, 'ifOlderThanSeconds'>> = {
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
    if (r.spec.access === 'write' && !r.skipped) refuseUnknownFields(r, r.current);
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
      if (r.spec.access === 'read' && err instanceof KubernetesError && err.code === 'SECRET_MISSING')
        return { state: 'missing', notes: [], warnings: [] };
      throw err;
    });
}

function describeCurrent(current: CurrentIdentity): string {
  if (current.state === 'ok' && current.identity)
    return `current identity ${current.identity.record.urn} (fingerprint ${current.identity.key.kid})`;
  if (current.state === 'corrupt')
    return `current identity does not decode (${current.problem?.message ?? 'corrupt'}); it would be kept, not used`;
  return 'no identity yet: a first one would be enrolled';
}

/**
 * A rotation or rollback rewrites the identity with the fields this tool knows: fields a newer agent
 * added (docs/protocol.md §5) would be dropped without a word, so the run stops before enrolling or
 * restoring unless --override-agent-settings, which the output then names.
 */
function refuseUnknownFields(r: Run, current: CurrentIdentity): void {
  // A writing run that does not enroll restores the previous identity (rollback).
  const rollback = r.spec.enrolls !== true;
  const found = [
    ...(current.unknownFields ?? []),
    ...(rollback ? (current.previousUnknownFields ?? []).map((f) => `${f} (in the backup)`) : []),
  ];
  if (!found.length) return;
  const label = need(r.resolved, 'target').target.label;
  const what = `${label} holds fields this tool does not know: ${found.join(', ')}`;
  if ((r.spec.options as { overrideAgentSettings?: boolean }).overrideAgentSettings) {
    r.report.warn(`--override-agent-settings: ${what}; the ${rollback ? 'rollback' : 'rotation'} writes the identity without them`);
    return;
  }
  throw new ConfigError(
    'IDENTITY_FIELDS_UNKNOWN',
    `${what}. A newer agent wrote them (workload-identity enrollment adds such fields, ` +
      `datadog-agent #56545); ${rollback ? 'a rollback' : 'a rotation'} would drop them and leave a key-enrolled identity`,
    `Nothing was ${rollback ? 'restored' : 'enrolled'} and nothing was changed. ` +
      `See what the agent that wrote them expects (\`par-identity status\` lists them); ` +
      'to rewrite the identity without them, run again with --override-agent-settings.',
    { fields: found },
  );
}
