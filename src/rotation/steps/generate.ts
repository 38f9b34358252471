import { generateIdentityKey } from '../../identity/index.js';
import type { Step } from '../run.js';

export const generate: Step = {
  name: 'generate',
  title: 'generate a key',
  async run(r) {
    r.key = generateIdentityKey();
  },
  async plan() {
    return 'would generate a fresh ECDSA P-256 key with node:crypto (kept in memory only)';
  },
};
