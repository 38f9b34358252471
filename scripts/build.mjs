// Bundles the npm package into dist/:
// - par-identity.js, the one entry the bin runs: all of the product's own code and its small
//   dependencies in ONE module, every dependency inside (no node_modules resolution at run time except
//   the native keychain module). Not split into chunks: each ES module node loads costs memory and
//   time of its own (split into chunks, a local rotate-identity loaded 34), while code only imported lazily sits in
//   the file as a function V8 does not compile until a command calls it.
// - client-node-<hash>.js, yaml-<hash>.js: the two large libraries, each a module of its own that the
//   product import()s when a command needs it, so `--help` never reads them and a local
//   rotate-identity never reads the Kubernetes API classes (1.2 MB; client-node's typed API classes
//   only, src/kube/client-node-api.ts).
// - api.js, the programmatic API (package.json "exports" "."): a second entry built the same way, so
//   it loads the same library modules; it has its own copy of the product code (and of the error
//   classes it exports, which are the ones it throws).
// - types/, the API's declarations: emitted by tsc from src/api.ts, and only the files its
//   declarations import (checked: nothing outside them, no package but node:*), so nothing dangles.
// - emulators.js, the emulator bundle, loaded by `par-identity emulator` only (never by the product).
// - launcher-error.js, the launcher's error for a Node too old (src/launcher-error.ts), built for any Node.
// - help.js, the help texts (and the version line) the launcher prints for `--help`, `help <command>`,
//   `<command> -h`… without importing par-identity.js, rendered by par-identity.js itself below, with
//   the rule that picks them (src/cli/fast-help.ts).
// Then the man page is regenerated from the same command definitions that produce --help.
import { createHash } from 'node:crypto';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { builtinsThroughRequire, esmRequireBanner, LAZY_LIBRARIES, productOptions, sideEffectFree } from './bundle-options.mjs';

await rm(new URL('../dist/', import.meta.url), { recursive: true, force: true });
await mkdir(new URL('../dist/', import.meta.url), { recursive: true });

/** esbuild's [hash] style: 8 characters of base32 (A–Z, 2–7) from the content. */
const contentHash = (bytes) => {
  const digest = createHash('sha256').update(bytes).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 8) {
      out += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
};

// Each library on its own, written under a name carrying its content hash.
const libraries = await Promise.all(
  LAZY_LIBRARIES.map(async (lib) => {
    const result = await build({
      ...productOptions,
      stdin: {
        contents: lib.wrapper,
        resolveDir: new URL('..', import.meta.url).pathname,
        sourcefile: `${lib.name}-module.js`,
        loader: 'js',
      },
      outfile: `dist/${lib.name}.js`,
      format: 'esm',
      banner: { js: esmRequireBanner },
      write: false,
      metafile: true,
      plugins: lib.sideEffectFree ? [sideEffectFree(lib.sideEffectFree)] : [],
    });
    const { contents } = result.outputFiles[0];
    const file = `${lib.name}-${contentHash(contents)}.js`;
    await writeFile(new URL(`../dist/${file}`, import.meta.url), contents);
    return { ...lib, file, metafile: result.metafile };
  }),
);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** A specifier is a package name, or one of our files by its path from the root (matched on the resolved path). */
const fileOf = new Map(libraries.map((lib) => [lib.specifier.startsWith('src/') ? join(ROOT, lib.specifier) : lib.specifier, lib.file]));

/** import() of a library becomes import() of its module beside par-identity.js; a static import of one is a build error. */
const librariesAsModules = {
  name: 'libraries-as-modules',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.libraries) return undefined;
      let key = fileOf.has(args.path) ? args.path : undefined;
      if (!key && args.path.startsWith('.') && /client-node-api\.(js|ts)$/.test(args.path))
        key = join(args.resolveDir, args.path).replace(/\.js$/, '.ts');
      if (!key || !fileOf.has(key)) return undefined;
      if (args.kind !== 'dynamic-import')
        throw new Error(`${args.importer} imports ${args.path} statically: the product loads it with import() only`);
      return { path: `./${fileOf.get(key)}`, external: true };
    });
  },
};

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
  const options = {
    ...parsed.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: SRC,
    outDir: join(ROOT, '.tmp', 'types'),
  };
  const program = ts.createProgram([join(SRC, 'api.ts')], options);
  const emitted = new Map();
  const { diagnostics } = program.emit(undefined, (file, text) => emitted.set(relative(options.outDir, file), text), undefined, true);
  if (diagnostics.length)
    throw new Error(
      ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' }),
    );
  const kept = new Map();
  const visit = (file) => {
    if (kept.has(file)) return;
    const text = emitted.get(file);
    if (text === undefined) throw new Error(`declarations: ${file} is imported but was not emitted`);
    kept.set(file, text);
    for (const [, spec] of text.matchAll(/(?:from|import\()\s*["']([^"']+)["']/g)) {
      if (spec.startsWith('node:')) continue;
      if (!spec.startsWith('.'))
        throw new Error(
          `declarations: ${file} imports the package ${spec}, which an installed par-identity does not have; keep it out of the API's types`,
        );
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
    format: 'esm',
    sourcemap: 'linked',
    metafile: true,
    banner: { js: esmRequireBanner },
    plugins: [builtinsThroughRequire, librariesAsModules],
  }),
  build({
    ...productOptions,
    entryPoints: { emulators: 'emulators/bundle.ts' },
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
// test/e2e/package-contents.test.ts. The libraries' modules are outputs of this build, not externals.
const libraryPaths = new Map(libraries.map((lib) => [`./${lib.file}`, `dist/${lib.file}`]));
for (const output of Object.values(product.metafile.outputs)) {
  output.imports = output.imports.map((i) => (libraryPaths.has(i.path) ? { path: libraryPaths.get(i.path), kind: i.kind } : i));
}
for (const lib of libraries) {
  for (const [path, output] of Object.entries(lib.metafile.outputs))
    product.metafile.outputs[path.replace(`${lib.name}.js`, lib.file)] = output;
}
await writeFile(
  new URL('../dist/metafile.json', import.meta.url),
  JSON.stringify({ product: product.metafile, emulators: emulators.metafile }),
);

const { renderHelpModule, renderManPage } = await import(`../dist/par-identity.js?${Date.now()}`);
// The help texts bin/par-identity.js prints for a pure help request without importing the bundle:
// commander's own output, captured from the program built from the table (src/cli/docs/help-texts.ts),
// bundled with the one rule that answers from them (src/cli/fast-help.ts), which the single executable's
// entry (scripts/build-sea.mjs) imports from this very file. Only built-ins, through getBuiltinModule.
await build({
  stdin: {
    contents: `${await renderHelpModule()}export { storedAnswer, writeOut } from './src/cli/fast-help.ts';\n`,
    resolveDir: fileURLToPath(new URL('..', import.meta.url)),
    sourcefile: 'help.js',
    loader: 'ts',
  },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: productOptions.target,
  outfile: fileURLToPath(new URL('../dist/help.js', import.meta.url)),
  logLevel: 'warning',
});
// The launcher's one error of its own (a Node too old to run the product): its exit status and --json
// object from the error table and the one envelope builder (src/launcher-error.ts), in a module every
// Node since 14 parses, which the launcher imports only on such a Node.
await build({
  entryPoints: { 'launcher-error': 'src/launcher-error.ts' },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node14',
  outdir: 'dist',
  logLevel: 'warning',
});
// The commands a checkout puts on PATH (the README's lab: `export PATH="$PWD/dist/bin:$PATH"`) with nothing
// installed globally: par-identity, and kubectl-par_identity, the name kubectl finds a plugin by
// (`kubectl par-identity ...`). Links to the one launcher; Node runs the file a link points to, so its
// imports resolve from bin/. The npm package installs the same two names (package.json "bin").
await mkdir(new URL('../dist/bin/', import.meta.url), { recursive: true });
for (const name of ['par-identity', 'kubectl-par_identity'])
  await symlink('../../bin/par-identity.js', new URL(`../dist/bin/${name}`, import.meta.url));
await mkdir(new URL('../man/', import.meta.url), { recursive: true });
await writeFile(new URL('../man/par-identity.1', import.meta.url), await renderManPage());
