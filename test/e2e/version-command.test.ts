import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

// `par-identity version`: what a bug report needs, from the built binary (issue 25).

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const head = (() => {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: new URL('../../', import.meta.url).pathname,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return undefined;
  }
})();

describe('par-identity version', () => {
  it('--json: version, commit, Node, platform and the kind of build, one document', async () => {
    const run = await runCli(['version', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({
      status: 'ok',
      command: 'version',
      version: pkg.version,
      platform: process.platform,
      arch: process.arch,
      singleExecutable: Boolean(process.env.PAR_IDENTITY_TEST_BIN),
    });
    expect(doc.node).toMatch(/^v\d+\.\d+\.\d+$/);
    // The build stamps the commit it was made from (the test and the build share this checkout).
    if (head) expect(doc.commit).toMatch(/^[0-9a-f]{40}$/);
    else expect(doc.commit).toBe('unknown');
  });

  it('in text: one line a human reads first, then the details; the same as a global flag after the command', async () => {
    const run = await runCli(['version']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(`par-identity ${pkg.version}`);
    expect(run.stdout).toMatch(/node: +v\d+/);
    expect(run.stdout).toMatch(/single executable: +(yes|no \(npm package\))/);
    const flag = await runCli(['--version']);
    expect(flag.stdout.trim()).toBe(pkg.version);
  });
});
