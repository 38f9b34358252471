import { generateIdentityKey } from '../../identity/index.js';
import { describeOrphan } from '../orphans.js';
import { need, type Step } from '../run.js';

export const generate: Step = {
  name: 'generate',
  title: 'generate a key',
  async run(r) {
    // An interrupted run's pending key is never reused: whether the server registered it cannot be
    // asked, nor how a second enrollment of it would be taken. It is kept aside and reported
    // (docs/identity-lifecycle.md §3).
    const aside = await need(r.resolved, 'target').target.pending?.setAside(r.io.now());
    if (aside) r.report.warn(`a run interrupted after sending a key for enrollment left ${describeOrphan(aside)}`);
    r.key = generateIdentityKey();
  },
  async plan(r) {
    const { pending } = need(r.resolved, 'target').target;
    const found = (await pending?.list())?.find((o) => o.state === 'pending');
    const aside = found ? `; would first keep the pending key of an interrupted run aside (${describeOrphan(found)})` : '';
    return `would generate a fresh ECDSA P-256 key with node:crypto (kept in memory${pending ? `, and as pending in ${pending.where} while it is enrolled` : ' only'})${aside}`;
  },
};
