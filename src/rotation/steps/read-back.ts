import { need, type Step } from '../run.js';

export const readBack: Step = {
  name: 'read-back',
  title: 'read back and decode',
  async run(r) {
    r.inService = await need(r.resolved, 'target').target.readBack(need(r.next, 'new identity'));
  },
  async plan(r) {
    return `would re-read ${need(r.resolved, 'target').target.label} and check it holds exactly the new identity`;
  },
};
