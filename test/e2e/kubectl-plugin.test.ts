import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv } from './run-cli.js';

// par-identity as a kubectl plugin: kubectl runs `kubectl-par_identity` from PATH for
// `kubectl par-identity ...` (its plugin naming rule: dashes in the command are underscores in the
// file name). The checkout's build puts that name in dist/bin beside par-identity, and the npm package
// installs both (package.json "bin"). Run with the real kubectl: the one on PATH (CI installs it).

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const KUBECTL = process.env.PAR_IDENTITY_TEST_KUBECTL || whichKubectl();
const REQUIRED = process.env.CI === 'true';

function whichKubectl(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = join(dir, 'kubectl');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

const scratch: string[] = [];
afterAll(async () => {
  await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
});

describe.skipIf(!KUBECTL && !REQUIRED)('kubectl par-identity', () => {
  it('kubectl finds the plugin in the checkout and runs it with its arguments', async () => {
    expect(KUBECTL, 'kubectl must be on PATH (or PAR_IDENTITY_TEST_KUBECTL set) when CI=true').toBeTruthy();
    const home = await mkdtemp(join(tmpdir(), 'par-kubectl-plugin-'));
    scratch.push(home);
    const env = cleanEnv({ HOME: home, PATH: `${join(ROOT, 'dist/bin')}:${dirname(process.execPath)}:/usr/bin:/bin`, NO_COLOR: '1' });
    const list = await run(KUBECTL!, ['plugin', 'list', '--name-only'], { env }).catch((err: { stdout: string }) => err);
    expect(list.stdout).toContain('kubectl-par_identity');
    const version = await run(KUBECTL!, ['par-identity', 'version'], { env });
    expect(version.stdout).toMatch(/^par-identity \d+\.\d+\.\d+/);
    const help = await run(KUBECTL!, ['par-identity', 'rotate-par-identity', '--help'], { env });
    expect(help.stdout).toContain('Usage: par-identity rotate-par-identity');
  });
});
