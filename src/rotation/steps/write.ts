import { need, type Step } from '../run.js';

/** The new identity into the target, through the target's own guard (atomic rename / resourceVersion). */
export const write: Step = {
  name: 'write',
  title: 'write the new identity',
  atomic: true,
  async run(r) {
    const { target } = need(r.resolved, 'target');
    r.change = 'rotated';
    r.written = await target.write(need(r.current, 'current identity'), need(r.next, 'new identity'));
    for (const note of r.written.notes) r.report.info(note);
    for (const warning of r.written.warnings) r.report.warn(warning);
  },
  async plan(r) {
    r.change = 'rotated';
    return `would ${need(r.resolved, 'target').target.describeWrite(need(r.current, 'current identity'))}`;
  },
};
