// Entry of dist/emulators.js, the emulator bundle: built separately from the product bundle
// (dist/par-identity.js) and loaded by `par-identity emulator` only when that command runs, so no
// emulator code (nor demo-runner, nor the known-good enrollment requests) ships inside the product.

export { startDemoReplicas, startDemoRunner } from './demo-runner/index.js';
export { startEmulators } from './run-emulators.js';

/** Present only in this bundle: the build test greps the product bundle for it. */
export const EMULATOR_BUNDLE_MARKER = 'par-identity-emulator-bundle:6f1c2a';
