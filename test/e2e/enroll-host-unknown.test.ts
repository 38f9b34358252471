import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../emulators/enrollment/options.js';
import { type LocalFixture, localFixture } from './local-fixture.js';
import { CAN_UNSHARE_MOUNTS, runInMountNamespace } from './mount-namespace.js';
import type { CliRun } from './run-cli.js';

// A host name that does not exist will not exist on the next try: the run fails at once, naming the
// host and the setting behind it, instead of retrying until --timeout. `.invalid` never resolves
// (RFC 2606), so the resolver answers ENOTFOUND without asking the network. A resolver that cannot
// answer now (EAI_AGAIN) and a connection error may pass: those are retried until --timeout.

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

describe('an enrollment host that does not resolve', () => {
  it('fails at once with ENROLL_HOST_UNKNOWN (exit 5) after one attempt, nothing written', async () => {
    const yaml = [
      `api_key: ${DEFAULT_API_KEY}`,
      `app_key: ${DEFAULT_APP_KEY}`,
      'dd_url: https://api.par-test.invalid',
      'hostname: e2e-host',
      'private_action_runner:',
      '  enabled: true',
      '',
    ];
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

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// EAI_AGAIN as a real resolver gives it: the run sees an /etc/resolv.conf of its own (a bind mount in a
// mount namespace of its own, unshare -m) naming a loopback nameserver that does not answer. Needs root.
function withDeadResolver(args: string[], env: Record<string, string>): Promise<CliRun> {
  const resolvConf = join(tmpdir(), `par-e2e-resolv-${process.pid}.conf`);
  return runInMountNamespace('printf "nameserver 127.0.0.1\\n" > "$1" && mount --bind "$1" /etc/resolv.conf', [resolvConf], args, env);
}

// Every attempt failed before reaching a server: nothing can have been registered, so the pending key
// goes too and no possible orphan is reported (docs/identity-lifecycle.md §3).
describe('errors that retrying can cure are retried until --timeout', () => {
  async function pointAt(ddUrl: string): Promise<void> {
    const yaml = [
      `api_key: ${DEFAULT_API_KEY}`,
      `app_key: ${DEFAULT_APP_KEY}`,
      `dd_url: ${ddUrl}`,
      'hostname: e2e-host',
      'private_action_runner:',
      '  enabled: true',
      '',
    ];
    await writeFile(join(fx.dir, 'datadog.yaml'), yaml.join('\n'));
  }

  it('a connection refused: retried with the same key, then ENROLL_TIMEOUT (exit 5), nothing written', async () => {
    await pointAt(`http://127.0.0.1:${await closedPort()}`);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--timeout', '2s', '--json']);
    expect(run.code, run.stderr).toBe(5);
    expect(JSON.parse(run.stdout)).toMatchObject({ code: 'ENROLL_TIMEOUT' });
    expect(run.stderr).toMatch(/enrollment attempt 1 failed \([^)]*ECONNREFUSED[^)]*\); retrying in [\d.]+ s with the same key/);
    expect(run.stderr).toContain('enrollment attempt 2 failed');
    expect(await fx.files()).toEqual(['datadog.yaml']);
    const status = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(status.stdout).not.toContain('possibleOrphans":[{');
    expect(status.code).not.toBe(15);
  });

  it.skipIf(!CAN_UNSHARE_MOUNTS)(
    `a resolver that does not answer (EAI_AGAIN): retried, then ENROLL_TIMEOUT, never ENROLL_HOST_UNKNOWN${CAN_UNSHARE_MOUNTS ? '' : ' [SKIPPED: needs root and unshare(1)]'}`,
    async () => {
      // Not resolvable anyway: the point is the resolver's answer, "try again", not the name.
      await pointAt('https://api.par-test.example');
      const run = await withDeadResolver(['rotate-identity', '-c', fx.dir, '--timeout', '2s', '--json'], { ...fx.env });
      expect(run.code, run.stderr).toBe(5);
      expect(JSON.parse(run.stdout)).toMatchObject({ code: 'ENROLL_TIMEOUT' });
      expect(run.stderr).toMatch(/enrollment attempt 1 failed \([^)]*EAI_AGAIN[^)]*\); retrying/);
      expect(run.stderr).toContain('enrollment attempt 2 failed');
      expect(run.stdout + run.stderr).not.toContain('ENROLL_HOST_UNKNOWN');
      expect(await fx.files()).toEqual(['datadog.yaml']);
    },
  );
});
