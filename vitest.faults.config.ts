import { defineConfig } from 'vitest/config';

// `npm run test:faults`: the fault matrix of the built binary (test/faults), which prints its table.
export default defineConfig({
  test: {
    include: ['test/faults/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
    setupFiles: ['test/setup/no-cloud-metadata.ts', 'test/setup/no-host-services.ts'],
  },
});
