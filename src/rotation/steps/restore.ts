import { need, type Step } from '../run.js';

/** rollback's write: the previous identity back in service through the target's own guard; the replaced one becomes the previous. */
export const restore: Step = {
  name: 'restore',
  title: 'restore the previous identity',
  atomic: true,
  async run(r) {
    const { target } = need(r.resolved, 'target');
    r.change = 'rolled back';
    r.restored = await target.restore(need(r.current, 'current identity'));
    for (const warning of r.restored.warnings) r.report.warn(warning);
    r.inService = r.restored.restored;
  },
  async plan(r) {
    r.change = 'rolled back';
    return `would ${await need(r.resolved, 'target').target.planRestore(need(r.current, 'current identity'))}`;
  },
};
