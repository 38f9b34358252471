import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { errorEnvelope } from '../../src/error-envelope.js';
import { ERROR_CODES, ExitCode } from '../../src/errors.js';
import { nodeUnsupported } from '../../src/launcher-error.js';

// bin/par-identity.js cannot import src/errors.ts (it must run on any Node): it imports
// dist/launcher-error.js (src/launcher-error.ts, built for any Node), so it writes no exit status of its
// own. Runs the built launcher: `npm run build` first.
const LAUNCHER = fileURLToPath(new URL('../../bin/par-identity.js', import.meta.url));

describe('launcher: Node version check', () => {
  it("writes no exit status of its own: the status and --json object are the table's and the one envelope builder's", () => {
    expect(readFileSync(LAUNCHER, 'utf8')).not.toMatch(/process\.exit\(\d|exitCode: \d/);
    const failure = nodeUnsupported('v20.20.2', 24, true);
    expect(failure.exitCode).toBe(ExitCode[ERROR_CODES.NODE_UNSUPPORTED.exit]);
    expect(JSON.parse(failure.stdout!)).toEqual(
      errorEnvelope({
        code: 'NODE_UNSUPPORTED',
        exitCode: failure.exitCode,
        message: expect.stringContaining('v20.20.2') as unknown as string,
        hint: expect.any(String) as unknown as string,
      }),
    );
  });

  it('on a Node older than 24 prints one line and exits with it, before importing anything', () => {
    // An old Node simulated on this one: process.versions.node reported as 20 before the launcher runs.
    const fake = `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.20.2'});Object.defineProperty(process,'version',{value:'v20.20.2'})`;
    const run = spawnSync(process.execPath, ['--import', fake, LAUNCHER, '--version'], { encoding: 'utf8' });
    expect(run.status).toBe(ExitCode[ERROR_CODES.NODE_UNSUPPORTED.exit]);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/NODE_UNSUPPORTED.*Node\.js 24 or newer.*v20\.20\.2.*single executable/);
  });
});
