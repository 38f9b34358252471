import { defineConfig } from 'vitest/config';

// `npm run test:sea`: the end-to-end tests of the rotate, status, rollback and watch commands again,
// against the single executable named by PAR_IDENTITY_TEST_BIN (see test/e2e/run-cli.ts), plus the
// checks of the executables themselves.
export default defineConfig({
  test: {
    include: [
      'test/e2e/rotate-identity.test.ts',
      'test/e2e/rotate-par-identity.test.ts',
      'test/e2e/status-rollback.test.ts',
      'test/e2e/watch-cli.test.ts',
      'test/sea/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    setupFiles: ['test/setup/no-cloud-metadata.ts', 'test/setup/no-host-services.ts'],
  },
});
