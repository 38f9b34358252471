// Bundles the npm package into dist/:
// - par-identity.js, the one entry the bin runs, with every dependency inside the bundle (no
//   node_modules resolution at run time except the native keychain module). Modules imported lazily
//   (Kubernetes client, undici, jose, commands) become chunks beside it, so `--help` parses little.
// - emulators.js, the emulator bundle, loaded by `par-identity emulator` only (never by the product).
// Then the man page is regenerated from the same command definitions that produce --help.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { build } from 'esbuild';
import { builtinsThroughRequire, esmRequireBanner, productOptions } from './bundle-options.mjs';

await rm(new URL('../dist/', import.meta.url), { recursive: true, force: true });

const [product, emulators] = await Promise.all([
  build({
    ...productOptions,
    entryPoints: { 'par-identity': 'src/cli.ts' },
    outdir: 'dist',
    splitting: true,
    // Chunks sit beside par-identity.js so every one of them finds emulators.js at './emulators.js'.
    chunkNames: '[name]-[hash]',
    format: 'esm',
    sourcemap: 'linked',
    metafile: true,
    banner: { js: esmRequireBanner },
    plugins: [builtinsThroughRequire],
  }),
  build({
    ...productOptions,
    entryPoints: { emulators: 'src/emulators/bundle.ts' },
    outdir: 'dist',
    format: 'esm',
    metafile: true,
    banner: { js: esmRequireBanner },
  }),
]);

// What each output imports from outside the bundle; not shipped (the package has dist/*.js only), read by
// test/e2e/package-contents.test.ts.
await writeFile(new URL('../dist/metafile.json', import.meta.url), JSON.stringify({ product: product.metafile, emulators: emulators.metafile }));

const { renderManPage } = await import(`../dist/par-identity.js?${Date.now()}`);
await mkdir(new URL('../man/', import.meta.url), { recursive: true });
await writeFile(new URL('../man/par-identity.1', import.meta.url), await renderManPage());
