import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Checks of the single executables run with `npm run test:sea` (after `npm run build:sea`), the
    // fault matrix with `npm run test:faults`, the install from a packed clone with `npm run test:install`.
    exclude: [...configDefaults.exclude, 'test/sea/**', 'test/faults/**', 'test/install/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Every test file and every process it spawns sees PAR_IDENTITY_CLOUD_METADATA_URL on loopback, and
    // no docker daemon, kubelet, ECS or DMI of the machine (PAR_IDENTITY_HOST_ROOT, no DOCKER_*).
    setupFiles: ['test/setup/no-cloud-metadata.ts', 'test/setup/no-host-services.ts'],
  },
});
