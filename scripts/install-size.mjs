// Size of a global npm install of the packed package: `npm pack` into a temp folder, then
// `npm install -g` of that tarball into a temp prefix (its one runtime dependency comes from the
// registry). Prints the bytes on disk; also used by `npm run bench`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function bytesUnder(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/** { tarballBytes, installedBytes } of the package as built in dist/ now. */
export function measureInstallSize() {
  const work = mkdtempSync(join(tmpdir(), 'par-install-size-'));
  try {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' }),
    );
    const prefix = join(work, 'prefix');
    execFileSync('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', join(work, packed.filename)], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return { tarballBytes: packed.size, installedBytes: bytesUnder(prefix) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { tarballBytes, installedBytes } = measureInstallSize();
  console.log(`tarball ${(tarballBytes / 1e6).toFixed(2)} MB, installed globally ${(installedBytes / 1e6).toFixed(2)} MB`);
}
