import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ClusterFixture, clusterFixture } from './cluster-fixture.js';

// client-node 1.x went through node-fetch, which made Node 24/26 print [DEP0040] punycode and
// [DEP0169] url.parse() on every Kubernetes command. CI runs this file on each supported Node.

let fx: ClusterFixture;
beforeEach(async () => {
  fx = await clusterFixture();
});
afterEach(async () => {
  await fx.close();
});

describe(`Kubernetes commands on Node ${process.versions.node}`, () => {
  it('print no deprecation warning (rotate-par-identity, then status --secret)', async () => {
    // Warnings must be able to appear: nothing in the environment may silence them.
    const env = { NODE_OPTIONS: undefined, NODE_NO_WARNINGS: undefined };
    const rotate = await fx.rotate([], { env });
    expect(rotate.code, rotate.stderr).toBe(0);
    const status = await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig], { env });
    expect(status.code, status.stderr).toBe(0);
    for (const run of [rotate, status]) {
      expect(run.stderr).not.toMatch(/DeprecationWarning|\[DEP\d*\]/);
    }
  });
});
