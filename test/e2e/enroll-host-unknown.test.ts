import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../src/emulators/enrollment/options.js';
import { type LocalFixture, localFixture } from './local-fixture.js';

// A host name that does not exist will not exist on the next try: the run fails at once, naming the
// host and the setting behind it, instead of retrying until --timeout. `.invalid` never resolves
// (RFC 2606), so the resolver answers ENOTFOUND without asking the network.

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

describe('an enrollment host that does not resolve', () => {
  it('fails at once with ENROLL_HOST_UNKNOWN (exit 5) after one attempt, nothing written', async () => {
    const yaml = [`api_key: ${DEFAULT_API_KEY}`, `app_key: ${DEFAULT_APP_KEY}`, 'dd_url: https://api.par-test.invalid', 'hostname: e2e-host', 'private_action_runner:', '  enabled: true', ''];
    await writeFile(join(fx.dir, 'datadog.yaml'), yaml.join('\n'));
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--timeout', '10m', '--json']);
    expect(run.code, run.stderr).toBe(5);
    const error = JSON.parse(run.stdout) as { code: string; message: string; hint: string };
    expect(error.code).toBe('ENROLL_HOST_UNKNOWN');
    expect(error.message).toContain('api.par-test.invalid');
    expect(error.hint).toMatch(/dd_url/);
    // Not one retry line: the failure came from the first attempt, not from the deadline.
    expect(run.stderr).not.toMatch(/retry/i);
    expect(await fx.files()).toEqual(['datadog.yaml']);
  });
});
