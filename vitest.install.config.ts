import { defineConfig } from 'vitest/config';

// `npm run test:install` (CI, after `npm test`): the package packed from an unbuilt clone and installed
// with `npm install -g` (this needs the registry for the dependency's metadata), and which Node the npm
// scripts pick with an old or a supported Node first on PATH.
export default defineConfig({
  test: {
    include: ['test/install/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    setupFiles: ['test/setup/no-cloud-metadata.ts', 'test/setup/no-host-services.ts'],
  },
});
