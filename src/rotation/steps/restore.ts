import { need, type Step } from '../run.js';

/**
 * rollback's write: the previous identity back in service through the target's own guard; the
 * replaced one becomes the previous. It runs after the verify step proved the previous identity
 * (or --no-verify): a rejected one is never put back.
 */
export const restore: Step = {
  name: 'restore',
  title: 'restore the previous identity',
  atomic: true,
  async run(r) {
    const { target } = need(r.resolved, 'target');
    r.change = 'rolled back';
    r.restored = await target.restore(need(r.current, 'current identity'));
    for (const warning of r.restored.warnings) r.report.warn(warning);
    const restored = r.restored.restored;
    r.inService = restored;
    if (!r.verify?.performed) return;
    // The check proved the identity read before the restore; a Secret re-read by the restore may hold another one.
    const proven = r.current?.previous?.key.kid;
    if (proven !== restored.key.kid) {
      r.verify = { performed: false };
      return r.report.warn(
        `the identity restored (${restored.record.urn}) is not the one verified: the target changed during the run; ` +
          `prove it with \`par-identity status --verify\` before restarting the runner`,
      );
    }
    // The durable mark that keeps this identity as the previous one until another passes (docs/identity-lifecycle.md §1);
    // a failed mark costs only that protection, so it warns.
    try {
      const marked = await target.recordVerified(restored, r.io.now());
      // The result names the Secret as it now is, so a runbook's next guarded write starts from it.
      if (marked.resourceVersion && 'resourceVersion' in r.restored.data) r.restored.data.resourceVersion = marked.resourceVersion;
    } catch (err) {
      r.report.warn(`could not record ${restored.record.urn} as the last verified identity: ${(err as Error).message}`);
    }
  },
  async plan(r) {
    r.change = 'rolled back';
    return `would ${await need(r.resolved, 'target').target.planRestore(need(r.current, 'current identity'))}`;
  },
};
