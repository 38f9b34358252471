// Bundles TypeScript entry points of src/ and emulators/ into .tmp/<name>/ for scripts that need the library itself
// (the watch bench and demo): esbuild, ESM, dependencies left external (resolved from node_modules).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `entries`: output name → path from the repository root (src/..., emulators/...). Resolves with the output directory. */
export async function bundleSources(name, entries) {
  const outdir = join(ROOT, '.tmp', name);
  await build({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([out, src]) => [out, join(ROOT, src)])),
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    packages: 'external',
    define: { __PAR_VERSION__: JSON.stringify(`${name}-dev`) },
    logLevel: 'warning',
  });
  return outdir;
}

/** Resolves when `check()` is true, polling every 2 ms; rejects after `timeoutMs`. */
export async function until(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
