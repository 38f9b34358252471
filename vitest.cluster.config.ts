import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: the suite of test/cluster/ against the real control plane
// (scripts/control-plane.sh; PAR_IDENTITY_TEST_CLUSTER=real and KUBECONFIG set by
// scripts/test-cluster.sh). One file at a time: they share one apiserver, etcd and scheduler on two
// cores, and each has Nodes and namespaces of its own.
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.cluster.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    setupFiles: ['test/setup/no-cloud-metadata.ts', 'test/setup/no-host-services.ts'],
  },
});
