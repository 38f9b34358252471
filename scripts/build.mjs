// Bundles the npm package into dist/:
// - par-identity.js, the one entry the bin runs, with every dependency inside the bundle (no
//   node_modules resolution at run time except the native keychain module). Modules imported lazily
//   (Kubernetes client, undici, jose, commands) become chunks beside it, so `--help` parses little.
// - api.js, the programmatic API (package.json "exports" "."), an entry of the same split build:
//   it shares the chunks of the commands with the CLI and so the one copy of the error classes.
// - types/, the API's declarations: emitted by tsc from src/api.ts, and only the files its
//   declarations import (checked: nothing outside them, no package but node:*), so nothing dangles.
// - emulators.js, the emulator bundle, loaded by `par-identity emulator` only (never by the product).
// Then the man page is regenerated from the same command definitions that produce --help.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { esmRequireBanner, productOptions } from './bundle-options.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

await rm(new URL('../dist/', import.meta.url), { recursive: true, force: true });

/**
 * The declarations of src/api.ts, as { path relative to dist/types: text }: tsc emits one per source
 * file of the program, and only those reachable from api.d.ts through relative imports are kept.
 * Any other import (a package, even one of ours bundled) would dangle in the installed package.
 */
async function apiDeclarations() {
  const ts = (await import('typescript')).default;
  const configPath = join(ROOT, 'tsconfig.json');
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, ROOT);
  const SRC = join(ROOT, 'src');
  const options = { ...parsed.options, noEmit: false, declaration: true, emitDeclarationOnly: true, rootDir: SRC, outDir: join(ROOT, '.tmp', 'types') };
  const program = ts.createProgram([join(SRC, 'api.ts')], options);
  const emitted = new Map();
  const { diagnostics } = program.emit(undefined, (file, text) => emitted.set(relative(options.outDir, file), text), undefined, true);
  if (diagnostics.length) throw new Error(ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' }));
  const kept = new Map();
  const visit = (file) => {
    if (kept.has(file)) return;
    const text = emitted.get(file);
    if (text === undefined) throw new Error(`declarations: ${file} is imported but was not emitted`);
    kept.set(file, text);
    for (const [, spec] of text.matchAll(/(?:from|import\()\s*["']([^"']+)["']/g)) {
      if (spec.startsWith('node:')) continue;
      if (!spec.startsWith('.')) throw new Error(`declarations: ${file} imports the package ${spec}, which an installed par-identity does not have; keep it out of the API's types`);
      visit(normalize(join(dirname(file), spec.replace(/\.js$/, '.d.ts'))));
    }
  };
  visit('api.d.ts');
  return kept;
}

const [product, emulators] = await Promise.all([
  build({
    ...productOptions,
    entryPoints: { 'par-identity': 'src/cli.ts', api: 'src/api.ts' },
    outdir: 'dist',
    splitting: true,
    // Chunks sit beside par-identity.js so every one of them finds emulators.js at './emulators.js'.
    chunkNames: '[name]-[hash]',
    format: 'esm',
    sourcemap: 'linked',
    metafile: true,
    banner: { js: esmRequireBanner },
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

for (const [file, text] of await apiDeclarations()) {
  const path = join(ROOT, 'dist', 'types', file);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

// What each output imports from outside the bundle; not shipped (the package has dist/*.js only), read by
// test/e2e/package-contents.test.ts.
await writeFile(new URL('../dist/metafile.json', import.meta.url), JSON.stringify({ product: product.metafile, emulators: emulators.metafile }));

const { renderManPage } = await import(`../dist/par-identity.js?${Date.now()}`);
await mkdir(new URL('../man/', import.meta.url), { recursive: true });
await writeFile(new URL('../man/par-identity.1', import.meta.url), await renderManPage());
