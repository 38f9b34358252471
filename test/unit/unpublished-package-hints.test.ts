import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// par-identity is not on the npm registry (docs/install.md): no message of the product may send an
// operator to `npx par-identity` or `npm install -g par-identity`, which fail with E404. Only a
// document describing what a future release will publish may name them, on a line that says so.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The registry forms: npx par-identity, npm install/i/add -g par-identity[@version]; a tarball path is not one. */
const REGISTRY_INSTALL =
  /\bnpx\s+(?:-y\s+|--yes\s+)?par-identity\b(?![-./\w])|\bnpm\s+(?:install|i|add)\s+(?:-g|--global)\s+par-identity(?![-./\w])/;
/** A line that speaks of what a release will publish, not of what works today. */
const FUTURE_RELEASE = /\brelease will\b|\bwill publish\b/i;

function files(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full).flatMap((name) => (name === 'node_modules' || name === '__snapshots__' ? [] : files(join(path, name))));
}

function mentions(paths: string[]): string[] {
  return paths
    .flatMap(files)
    .filter((f) => /\.(ts|mjs|js|cjs|sh|md|1|json|yaml|yml)$/.test(f) || f.startsWith('bin/'))
    .flatMap((f) =>
      readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${relative(ROOT, join(ROOT, f))}:${i + 1}` }))
        .filter(({ line }) => REGISTRY_INSTALL.test(line)),
    )
    .map(({ line, at }) => `${at}: ${line.trim()}`);
}

describe('no hint points at the unpublished npm package', () => {
  it('recognises the registry forms and not an install from a tarball', () => {
    for (const yes of [
      'npx par-identity emulator',
      'npm install -g par-identity',
      'npm i --global par-identity@0.1.0',
      'npx -y par-identity',
    ])
      expect(REGISTRY_INSTALL.test(yes), yes).toBe(true);
    for (const no of [
      'npm install -g ./par-identity-0.1.0.tgz',
      'npm install -g par-identity-0.1.0.tgz',
      'npx vitest',
      'par-identity emulator',
    ])
      expect(REGISTRY_INSTALL.test(no), no).toBe(false);
  });

  it('the product (src, bin, man page, deploy, scripts) never names it', () => {
    expect(mentions(['src', 'bin', 'man', 'deploy', 'scripts', 'package.json'])).toEqual([]);
  });

  it('the documents name it only as what a release will publish', () => {
    const docs = mentions(['README.md', 'docs']).filter((m) => !FUTURE_RELEASE.test(m));
    // A sentence may wrap: the line before may carry the "a release will" part.
    const wrapped = docs.filter((m) => {
      const [file, line] = m.split(':') as [string, string];
      const previous = readFileSync(join(ROOT, file), 'utf8').split('\n')[Number(line) - 2] ?? '';
      return !FUTURE_RELEASE.test(previous);
    });
    expect(wrapped).toEqual([]);
  });

  it('the hints that used to point there point to the install from a checkout, with the tarball npm pack writes', () => {
    const emulator = readFileSync(join(ROOT, 'src/commands/emulator.ts'), 'utf8');
    const keychain = readFileSync(join(ROOT, 'src/credentials/keychain.ts'), 'utf8');
    // The source builds the name from VERSION (the sea test checks the printed hint names the real tarball).
    const hint = ['npm pack, then npm install -g ./par-identity-$', '{VERSION}.tgz: docs/install.md'].join('');
    for (const source of [emulator, keychain]) expect(source).toContain(hint);
  });
});
