import { execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startCli } from './run-cli.js';

// What the npm package ships, checked on the built dist/ (npm test builds first).

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EMULATOR_MARKER = 'par-identity-emulator-bundle:6f1c2a';
const CHUNK = /^dist\/[a-z0-9-]+-[A-Z0-9]{8}\.js$/;

interface PackFile {
  path: string;
}
const packed: string[] = (
  JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' })) as {
    files: PackFile[];
  }[]
)[0]!.files
  .map((f) => f.path)
  .sort();
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
const productFiles = packed.filter((p) => p.startsWith('dist/') && p !== 'dist/emulators.js');
const declarations = packed.filter((p) => p.endsWith('.d.ts'));

describe('npm pack contents', () => {
  it('ships the launcher, the CLI and API bundles and their chunks, the help texts, the API declarations, the emulators, the man page: nothing else', () => {
    // Chunk names carry a content hash; every other file is pinned by name.
    expect(packed.filter((p) => !CHUNK.test(p))).toEqual([
      'LICENSE',
      'README.md',
      'bin/par-identity.js',
      'dist/api.js',
      'dist/emulators.js',
      'dist/help.js',
      'dist/launcher-error.js',
      'dist/par-identity.js',
      'dist/types/api.d.ts',
      'dist/types/api/types.d.ts',
      'dist/types/command-options.d.ts',
      'dist/types/errors.d.ts',
      'dist/types/output-options.d.ts',
      'dist/types/reload/watch-events.d.ts',
      'dist/types/results/envelope.d.ts',
      'dist/types/results/identity.d.ts',
      'dist/types/results/rotation.d.ts',
      'dist/types/results/status.d.ts',
      'dist/types/results/watch.d.ts',
      'dist/types/version.d.ts',
      'dist/types/watch/watch-options.d.ts',
      'man/par-identity.1',
      'package.json',
    ]);
    expect(packed.filter((p) => CHUNK.test(p)).length).toBeGreaterThan(0);
  });

  it('every relative import of a bundle file is itself in the package', () => {
    for (const file of packed.filter((p) => p.startsWith('dist/') && p.endsWith('.js'))) {
      for (const [, spec] of read(file).matchAll(/(?:from|import\()\s*["'](\.\/[^"']+)["']/g)) {
        expect(packed, `${file} imports ${spec}`).toContain(`dist/${spec!.slice(2)}`);
      }
    }
  });

  it('the API declarations import only each other and node:* (nothing dangles in an installed package)', () => {
    expect(declarations.length).toBeGreaterThan(0);
    for (const file of declarations) {
      for (const [, spec] of read(file).matchAll(/(?:from|import\()\s*["']([^"']+)["']/g)) {
        if (spec!.startsWith('node:')) continue;
        expect(spec, `${file} imports ${spec}`).toMatch(/^\.\.?\//);
        expect(packed, `${file} imports ${spec}`).toContain(posix.join(posix.dirname(file), spec!.replace(/\.js$/, '.d.ts')));
      }
    }
  });

  it('package.json: the API is the root export with its types, the CLI is the bin', () => {
    const pkg = JSON.parse(read('package.json')) as { exports: Record<string, unknown>; types: string; bin: Record<string, string> };
    expect(pkg.exports).toEqual({ '.': { types: './dist/types/api.d.ts', default: './dist/api.js' }, './package.json': './package.json' });
    expect(pkg.types).toBe('./dist/types/api.d.ts');
    // kubectl-par_identity: the same launcher under the name kubectl runs for `kubectl par-identity`.
    expect(pkg.bin).toEqual({ 'par-identity': 'bin/par-identity.js', 'kubectl-par_identity': 'bin/par-identity.js' });
    for (const path of [pkg.types, (pkg.exports['.'] as { default: string }).default, pkg.bin['par-identity']!])
      expect(packed).toContain(path.replace(/^\.\//, ''));
  });

  it('what is bundled is not a runtime dependency: only the native keychain module is', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies)).toEqual(['@napi-rs/keyring']);
    // Imports the bundler left outside (esbuild's metafile of the build): built-ins, the keychain
    // module, and optional modules their users require inside try/catch (ws: bufferutil,
    // utf-8-validate; node-fetch: encoding; debug: supports-color). Anything else would need
    // node_modules at run time.
    const optional = ['@napi-rs/keyring', 'bufferutil', 'utf-8-validate', 'encoding', 'supports-color'];
    const meta = JSON.parse(read('dist/metafile.json')) as Record<
      string,
      { outputs: Record<string, { imports: { path: string; external?: boolean }[] }> }
    >;
    const external = new Set<string>();
    for (const build of Object.values(meta)) {
      for (const output of Object.values(build.outputs)) for (const i of output.imports) if (i.external) external.add(i.path);
    }
    expect(external.size).toBeGreaterThan(0);
    const unexpected = [...external].filter((p) => !p.startsWith('node:') && !builtinModules.includes(p) && !optional.includes(p));
    expect(unexpected).toEqual([]);
  });
});

describe('emulator bundle split', () => {
  it('the emulator-only marker is in dist/emulators.js and in no file of the product bundle', () => {
    expect(read('dist/emulators.js')).toContain(EMULATOR_MARKER);
    expect(read('emulators/bundle.ts')).toContain(EMULATOR_MARKER);
    expect(productFiles).toContain('dist/par-identity.js');
    for (const file of productFiles) expect(read(file).includes(EMULATOR_MARKER), file).toBe(false);
  });
});

describe('par-identity emulator', () => {
  it('loads dist/emulators.js at run time and serves both emulators', async () => {
    const cli = startCli(['emulator', '--kube', '--json']);
    try {
      const first = await new Promise<string>((resolve, reject) => {
        createInterface({ input: cli.child.stdout }).once('line', resolve);
        cli.exit.then(({ code }) => reject(new Error(`emulator exited (${code}): ${cli.stderr()}`)), reject);
      });
      const info = JSON.parse(first) as { status: string; enrollmentUrl: string; kubeUrl: string };
      expect(info).toMatchObject({
        status: 'listening',
        enrollmentUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        kubeUrl: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/),
      });
    } finally {
      cli.child.kill('SIGTERM');
      expect((await cli.exit).code).toBe(0);
    }
  });
});
