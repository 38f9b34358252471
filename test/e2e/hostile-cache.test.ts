import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asNobody, NOBODY, ROOT, ROOT_ONLY } from './attacker.js';
import { runCli } from './run-cli.js';

// The launcher's V8 code cache (bin/par-identity.js) holds code that the process runs: kept in a
// directory another user can write, a planted entry would run as root. uid 65534 creates the cache
// directories first, in a sticky 1777 directory that is the cache base's parent (a HOME of /tmp, or an
// XDG_CACHE_HOME there): the cache is then not used — nothing is read from or written there. The npm
// package's launcher only: the single executable carries its code cache inside itself.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-hostile-cache-'));
  await chmod(dir, 0o1777);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function filesUnder(path: string): Promise<string[]> {
  return (await readdir(path, { recursive: true })).sort();
}

describe('the launcher’s code cache is never another user’s directory', () => {
  it.runIf(ROOT)(
    `uid ${NOBODY} creates the cache directories first: the run does not use them, nothing is written there${ROOT_ONLY}`,
    async () => {
      const cache = join(dir, 'cache');
      asNobody(`umask 000; mkdir -p '${join(cache, 'par-identity', 'node-compile-cache')}'`);
      const run = await runCli(['version'], { env: { XDG_CACHE_HOME: cache } });
      expect(run.code, run.stderr).toBe(0);
      // Used, Node would have written the compiled bundle there (as root), and read what was planted.
      expect(await filesUnder(join(cache, 'par-identity', 'node-compile-cache'))).toEqual([]);
    },
  );

  it(`a cache base of this user's own, created by the run: used, every directory of it 0700 and this user's`, async () => {
    const cache = join(dir, 'mine');
    const run = await runCli(['version'], { env: { XDG_CACHE_HOME: cache } });
    expect(run.code, run.stderr).toBe(0);
    expect((await filesUnder(join(cache, 'par-identity', 'node-compile-cache'))).length).toBeGreaterThan(0);
    for (const path of [cache, join(cache, 'par-identity'), join(cache, 'par-identity', 'node-compile-cache')]) {
      const stats = await stat(path);
      expect([stats.uid, stats.mode & 0o777]).toEqual([process.geteuid?.(), 0o700]);
    }
  });
});
