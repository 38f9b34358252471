import { chmod, cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// A copy of the built binary (bin/, dist/ without source maps, package.json) in a fresh world-readable
// directory, for tests that run it as another user: that user may not be able to traverse the
// directories above the checkout (a 0700 home or workspace), wherever the checkout lives.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function openUp(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await openUp(path);
    // chmod follows a link: never a mode of the checkout's own files through one.
    else if (!entry.isSymbolicLink()) await chmod(path, 0o644);
  }
}

export interface PortableBin {
  bin: string;
  remove(): Promise<void>;
}

export async function portableBin(): Promise<PortableBin> {
  const dir = await mkdtemp(join(tmpdir(), 'par-bin-'));
  for (const part of ['bin', 'dist', 'package.json']) {
    // Not dist/bin: the build's links to bin/par-identity.js (the checkout's commands on PATH), which a
    // copy would point back into the checkout.
    await cp(join(ROOT, part), join(dir, part), {
      recursive: true,
      filter: (src) => !src.endsWith('.map') && src !== join(ROOT, 'dist', 'bin'),
    });
  }
  await openUp(dir);
  return { bin: join(dir, 'bin', 'par-identity.js'), remove: () => rm(dir, { recursive: true, force: true }) };
}
