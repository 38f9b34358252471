// Bundles the CLI into dist/cli.js (one file: start-up cost is module loading, not parsing), then
// regenerates the man page from the same command definitions that produce --help.
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { build } from 'esbuild';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));

await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli.js',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: 'linked',
  legalComments: 'none',
  define: { __PAR_VERSION__: JSON.stringify(pkg.version) },
  // Optional native speed-ups of ws; the pure-JS paths are used when they are absent.
  external: ['bufferutil', 'utf-8-validate'],
  banner: { js: "import { createRequire as __parCreateRequire } from 'node:module'; const require = __parCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

const { renderManPage } = await import(`../dist/cli.js?${Date.now()}`);
await mkdir(new URL('../man/', import.meta.url), { recursive: true });
await writeFile(new URL("../man/par-identity.1", import.meta.url), await renderManPage());
