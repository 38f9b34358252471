import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ExitCode } from '../../src/errors.js';

// bin/par-identity.js cannot import src/errors.ts (it must run on any Node): its hard-coded status
// for an unsupported Node is checked against the table here.
const LAUNCHER = fileURLToPath(new URL('../../bin/par-identity.js', import.meta.url));

describe('launcher: Node version check', () => {
  it('exits with the status of NODE_UNSUPPORTED', () => {
    const hardCoded = Number(/const NODE_UNSUPPORTED_EXIT = (\d+);/.exec(readFileSync(LAUNCHER, 'utf8'))?.[1]);
    expect(hardCoded).toBe(ExitCode[ERROR_CODES.NODE_UNSUPPORTED.exit]);
  });

  it('on a Node older than 24 prints one line and exits with it, before importing anything', () => {
    // An old Node simulated on this one: process.versions.node reported as 20 before the launcher runs.
    const fake = `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.20.2'});Object.defineProperty(process,'version',{value:'v20.20.2'})`;
    const run = spawnSync(process.execPath, ['--import', fake, LAUNCHER, '--version'], { encoding: 'utf8' });
    expect(run.status).toBe(13);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/NODE_UNSUPPORTED.*Node\.js 24 or newer.*v20\.20\.2.*single executable/);
  });
});
