import { chmod, chown, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FaultStep } from '../../emulators/enrollment/index.js';
import { decodeIdentity } from '../../src/identity/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { expectNoSecrets, IDENTITY, type LocalFixture, localFixture, secretsIn } from './local-fixture.js';
import { portableBin } from './portable-bin.js';
import { PROGRAM } from './run-cli.js';

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

const enrollRequests = () => fx.emulator.requests.filter((r) => r.route === 'enroll' && r.listener === 'main');
const publicKeyOf = (body: string) =>
  (JSON.parse(body) as { data: { attributes: { public_key_pem: string } } }).data.attributes.public_key_pem;

async function seedIdentity(): Promise<string> {
  const first = await fx.run(['rotate-identity', '-c', fx.dir]);
  expect(first.code, first.stderr).toBe(0);
  fx.emulator.reset();
  return fx.read();
}

function parseJson(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('rotate-identity happy path', () => {
  it('enrolls, writes a 0600 file the Go format describes, verifies online, and keeps a backup', async () => {
    const before = await seedIdentity();
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const out = parseJson(run.stdout);
    const text = await fx.read();
    const record = parseIdentityFile(text);
    const decoded = decodeIdentity(record);
    expect(out).toMatchObject({
      schemaVersion: 1,
      status: 'ok',
      command: 'rotate-identity',
      urn: record.urn,
      previousUrn: parseIdentityFile(before).urn,
      fingerprint: decoded.key.kid,
      identityFile: fx.identityPath,
      backupFile: `${fx.identityPath}.bak`,
      verify: { performed: true, ok: true, status: 200 },
      // The runner replaced, named as it was enrolled (the verified mark keeps the name): an owned runner, never removed by Datadog.
      previousRunner: {
        urn: parseIdentityFile(before).urn,
        name: fx.emulator.runners.find((r) => parseIdentityFile(before).urn.endsWith(r.runnerId))!.name,
        removedByDatadog: 'never',
      },
    });
    expect(typeof out.durationMs).toBe('number');
    expect(text).toMatch(
      /^\{"private_key":"[A-Za-z0-9_-]+","urn":"urn:dd:apps:on-prem-runner:us1:1234567:[^"]+","hostname":"e2e-host","api_key_hash":"[0-9a-f]{64}"\}$/,
    );
    expect((await stat(fx.identityPath)).mode & 0o777).toBe(0o600);
    expect((await stat(`${fx.identityPath}.bak`)).mode & 0o777).toBe(0o600);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(before);
    // .verified: the mark of the identity that passed the health check (docs/identity-lifecycle.md §1).
    expect(await fx.files()).toEqual(['datadog.yaml', IDENTITY, `${IDENTITY}.bak`, `${IDENTITY}.verified`]);
    // The emulator registered exactly the key we stored, and accepted a JWT signed with it.
    const runner = fx.emulator.runners.at(-1)!;
    expect(record.urn.endsWith(runner.runnerId)).toBe(true);
    expect(runner.publicKeyThumbprint).toBe(decoded.key.kid);
    expect(fx.emulator.requests.some((r) => r.route === 'health' && r.status === 200)).toBe(true);
    expect(run.stderr).toContain('→ write the new identity');
    expectNoSecrets(run, secretsIn(text));
  });

  it('prints URN, fingerprint, previous URN, backup and the restart reminder for humans', async () => {
    const before = await seedIdentity();
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    const record = parseIdentityFile(await fx.read());
    expect(run.stdout).toContain(`rotated: ${record.urn}`);
    expect(run.stdout).toContain(`fingerprint:  ${decodeIdentity(record).key.kid}`);
    expect(run.stdout).toContain(`backup:       ${fx.identityPath}.bak`);
    expect(run.stdout).toMatch(/next: Restart the Private Action Runner/);
    const previous = parseIdentityFile(before).urn;
    expect(run.stdout).toMatch(
      new RegExp(`previous runner: ${previous} \\("e2e-host-[^"]+"\\) stays registered in Datadog .*Datadog never removes it by itself`),
    );
    expect(run.stdout).toContain(`undo: ${PROGRAM} rollback --identity-file ${fx.identityPath}`);
  });

  it('--dry-run checks everything but enrolls nothing and writes nothing', async () => {
    const before = await seedIdentity();
    const filesBefore = await fx.files();
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(parseJson(run.stdout)).toMatchObject({ dryRun: true, identityFile: fx.identityPath });
    // The only requests a dry run makes are the two key checks: nothing is enrolled.
    expect(fx.emulator.requests.map((r) => r.route)).toEqual(['validate', 'validate_keys']);
    expect(await fx.read()).toBe(before);
    expect(await fx.files()).toEqual(filesBefore);
  });

  it('reads the API key from a file or stdin, never argv, and hashes the key the agent reads', async () => {
    await fx.writeConfig('');
    const keyFile = join(fx.dir, 'api.key');
    await writeFile(keyFile, `${fx.emulator.options.apiKeys[0]}\n`, { mode: 0o600 });
    const fromFile = await fx.run(['rotate-identity', '-c', fx.dir, '--api-key-file', keyFile, '--no-verify']);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stderr).toContain(`API key from file ${keyFile}`);
    const fromStdin = await fx.run(['rotate-identity', '-c', fx.dir, '--api-key-file', '-', '--no-verify'], {
      stdin: `${fx.emulator.options.apiKeys[0]}\n`,
    });
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.stderr).toContain('API key from stdin');
  });
});

describe('rotate-identity refuses before enrolling', () => {
  it('when private_action_runner.enabled is false (exit 3)', async () => {
    const run = await fx.run(['rotate-identity', '-c', fx.dir], { env: { DD_PRIVATE_ACTION_RUNNER_ENABLED: 'false' } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('error[RUNNER_DISABLED]');
    expect(fx.emulator.requests).toHaveLength(0);
  });

  it('when no config file is loaded and no --identity-file is given (exit 3)', async () => {
    // A directory that exists and holds no datadog.yaml (one that does not exist is CONFIG_NOT_FOUND).
    const empty = join(fx.dir, 'empty');
    await mkdir(empty);
    const run = await fx.run(['rotate-identity', '-c', empty], { env: { DD_PRIVATE_ACTION_RUNNER_ENABLED: 'true' } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('error[IDENTITY_PATH_UNRESOLVED]');
    expect(run.stderr).toContain('--identity-file');
  });

  it('when the directory is missing (exit 7, no request sent)', async () => {
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--identity-file', join(fx.dir, 'missing', IDENTITY)]);
    expect(run.code).toBe(7);
    expect(run.stderr).toContain('error[DIRECTORY_MISSING]');
    expect(fx.emulator.requests).toHaveLength(0);
  });

  it('when the directory is read-only for the user running it (exit 7, no request sent)', async () => {
    const before = await seedIdentity();
    await chmod(fx.dir, 0o555);
    await chmod(join(fx.dir, 'datadog.yaml'), 0o644);
    // root writes anywhere: run as nobody, from a copy of the binary nobody can reach wherever the checkout is.
    const asRoot = process.getuid?.() === 0;
    const portable = asRoot ? await portableBin() : undefined;
    const run = await fx
      .run(
        ['rotate-identity', '-c', fx.dir, '--identity-file', join(fx.dir, 'other.json')],
        portable ? { uid: 65534, gid: 65534, bin: portable.bin } : {},
      )
      .finally(() => portable?.remove());
    await chmod(fx.dir, 0o755);
    expect(run.code, run.stderr).toBe(7);
    expect(run.stderr).toContain('error[DIRECTORY_NOT_WRITABLE]');
    expect(fx.emulator.requests).toHaveLength(0);
    expect(await fx.read()).toBe(before);
  });

  it('when a key is an ENC[] secret handle (exit 3, handle not sent)', async () => {
    const run = await fx.run(['rotate-identity', '-c', fx.dir], { env: { DD_API_KEY: 'ENC[vault_api_key]' } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('error[SECRET_HANDLE_UNSUPPORTED]');
    expect(fx.emulator.requests).toHaveLength(0);
  });
});

interface FailureCase {
  name: string;
  steps: FaultStep[];
  code: number;
  errorCode: string;
  timeout?: string;
  /** The server may have registered the key (no answer that proves otherwise): it stays pending (docs/identity-lifecycle.md §3). */
  pending?: true;
}

const failures: FailureCase[] = [
  { name: '401', steps: [{ status: 401, body: '{"errors":["Unauthorized"]}' }], code: 4, errorCode: 'CREDENTIALS_REJECTED' },
  { name: '403', steps: [{ status: 403, body: '{"errors":["Forbidden"]}' }], code: 4, errorCode: 'CREDENTIALS_REJECTED' },
  { name: '404', steps: [{ status: 404, body: '{"errors":["Not found"]}' }], code: 5, errorCode: 'ENROLL_REJECTED' },
  {
    name: 'deadline exceeded',
    steps: Array.from({ length: 200 }, () => ({ status: 503 })),
    code: 5,
    errorCode: 'ENROLL_TIMEOUT',
    timeout: '1s',
    pending: true,
  },
  { name: 'redirect to another host', steps: [{ status: 307, redirectToOtherHost: true }], code: 5, errorCode: 'ENROLL_REDIRECT_REFUSED' },
  {
    name: 'oversized body',
    steps: [{ status: 200, oversizeBytes: 3 * 1024 * 1024 }],
    code: 5,
    errorCode: 'ENROLL_BAD_RESPONSE',
    pending: true,
  },
  { name: 'invalid JSON', steps: [{ invalidJson: true }], code: 5, errorCode: 'ENROLL_BAD_RESPONSE', pending: true },
  { name: 'wrong data.type', steps: [{ wrongType: true }], code: 5, errorCode: 'ENROLL_BAD_RESPONSE', pending: true },
  { name: 'runner id with ":"', steps: [{ runnerIdWithColon: true }], code: 5, errorCode: 'ENROLL_BAD_RESPONSE', pending: true },
];

describe('rotate-identity failure contract: live file untouched, no temp left, cause named, no secret printed', () => {
  it.each(failures)('$name → exit $code $errorCode', async ({ steps, code, errorCode, timeout, pending }) => {
    const before = await seedIdentity();
    const filesBefore = await fx.files();
    fx.emulator.script('enroll', ...steps);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--timeout', timeout ?? '20s']);
    expect(run.code, run.stderr).toBe(code);
    expect(run.stderr).toContain(`error[${errorCode}]`);
    expect(run.stderr).toMatch(/next: .*(not changed|Nothing was)/);
    expect(await fx.read()).toBe(before);
    expect(await fx.files()).toEqual(pending ? [...filesBefore, `${IDENTITY}.pending`].sort() : filesBefore);
    if (pending) expect(run.stderr).toContain('possible orphan');
    expectNoSecrets(run, secretsIn(before));
  });

  it('--json renders the error as one object with code, message and hint', async () => {
    fx.emulator.script('enroll', { status: 401, body: '{"errors":["Unauthorized"]}' });
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(run.code).toBe(4);
    expect(parseJson(run.stdout)).toMatchObject({
      schemaVersion: 1,
      status: 'error',
      code: 'CREDENTIALS_REJECTED',
      exitCode: 4,
      hint: expect.stringContaining('scopes'),
    });
  });

  it('redirect: the other host never receives the API key', async () => {
    fx.emulator.script('enroll', { status: 307, redirectToOtherHost: true });
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code).toBe(5);
    expect(fx.emulator.requests.filter((r) => r.listener === 'other')).toHaveLength(0);
  });

  it('500 then 200: retried with the same public key, and succeeds', async () => {
    fx.emulator.script('enroll', { status: 500 });
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    const attempts = enrollRequests();
    expect(attempts.map((r) => r.status)).toEqual([500, 200]);
    expect(publicKeyOf(attempts[0]!.body)).toBe(publicKeyOf(attempts[1]!.body));
    expect(run.stderr).toContain('retrying');
  });

  it('429 with Retry-After: waits at least that long before the next attempt', async () => {
    fx.emulator.script('enroll', { status: 429, retryAfter: '1' });
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    const [first, second] = enrollRequests();
    expect(second!.time - first!.time).toBeGreaterThanOrEqual(1000);
    expect(publicKeyOf(first!.body)).toBe(publicKeyOf(second!.body));
  });

  it('a dropped connection is retried', async () => {
    fx.emulator.script('enroll', { dropConnection: true });
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(enrollRequests()).toHaveLength(2);
  });
});

describe('rotate-identity with an unusual existing file', () => {
  it('an existing 0644 file: warns, and the new file and backup are 0600', async () => {
    const before = await seedIdentity();
    await chmod(fx.identityPath, 0o644);
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('has mode 0644');
    expect((await stat(fx.identityPath)).mode & 0o777).toBe(0o600);
    expect((await stat(`${fx.identityPath}.bak`)).mode & 0o777).toBe(0o600);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(before);
  });

  it.runIf(process.getuid?.() === 0)(
    'an old file of another user gives it no ownership: refused, untouched (running as root; docs/security.md §2)',
    async () => {
      await seedIdentity();
      await chown(fx.identityPath, 65534, 65534);
      const run = await fx.run(['rotate-identity', '-c', fx.dir]);
      expect(run.code, run.stderr).toBe(7);
      expect(run.stderr).toContain('error[FILE_OWNER_REFUSED]');
      const st = await stat(fx.identityPath);
      expect([st.uid, st.gid]).toEqual([65534, 65534]);
    },
  );

  it('a corrupt existing file is kept aside as .corrupt-<timestamp> (0600), never moved onto the good backup', async () => {
    await seedIdentity();
    const good = await seedIdentity();
    await fx.run(['rotate-identity', '-c', fx.dir]);
    const backupBefore = await fx.read(`${IDENTITY}.bak`);
    expect(backupBefore).toBe(good);
    await writeFile(fx.identityPath, '{"private_key":"not-a-key","urn":"x"}', { mode: 0o600 });
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: the current file does not decode/);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(good);
    const aside = (await fx.files()).filter((n) => n.startsWith(`${IDENTITY}.corrupt-`));
    expect(aside).toHaveLength(1);
    expect(aside[0]).toMatch(/\.corrupt-\d{8}T\d{6}Z$/);
    expect(await fx.read(aside[0])).toBe('{"private_key":"not-a-key","urn":"x"}');
    expect((await stat(join(fx.dir, aside[0]!))).mode & 0o777).toBe(0o600);
    expect(run.stderr).toContain(`kept as ${join(fx.dir, aside[0]!)}`);
    expect(decodeIdentity(parseIdentityFile(await fx.read())).urn.orgId).toBe(1234567);
  });

  it('a rejected new key (401): exit 8, nothing written, the pending key kept as the record of the runner to remove', async () => {
    const before = await seedIdentity();
    const filesBefore = await fx.files();
    fx.emulator.script('health', { status: 401, body: '{"errors":["Unauthorized"]}' });
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(8);
    expect(run.stderr).toContain('error[VERIFICATION_FAILED]');
    expect(run.stderr).toContain(`nothing was written to identity file ${fx.identityPath}`);
    expect(run.stderr).toContain('nothing to roll back');
    // The live file, its backup and the verified mark are as they were; only the pending key is new.
    expect(await fx.read()).toBe(before);
    expect(await fx.files()).toEqual([...filesBefore, `${IDENTITY}.pending`].sort());
    const rejected = fx.emulator.runners.at(-1)!;
    expect(JSON.parse(await fx.read(`${IDENTITY}.pending`))).toMatchObject({
      urn: expect.stringContaining(rejected.runnerId),
      verification: 'rejected',
    });
    expect(run.stderr).toContain(`Remove urn:dd:apps:on-prem-runner:us1:1234567:${rejected.runnerId} in Datadog`);
  });
});

describe('rotate-identity survives kill -9 at every step between enrollment and the directory fsync', () => {
  const oldSurvives = ['after-enroll', 'after-temp-write', 'after-backup'];
  const newSurvives = ['after-rename', 'after-dir-fsync'];
  it.each([...oldSurvives, ...newSurvives])('%s', async (point) => {
    const before = await seedIdentity();
    const run = await fx.run(['rotate-identity', '-c', fx.dir], { env: { PAR_IDENTITY_FAILPOINT: point } });
    expect(run.signal).toBe('SIGKILL');
    const after = await fx.read();
    if (oldSurvives.includes(point)) expect(after).toBe(before);
    else {
      expect(after).not.toBe(before);
      const runner = fx.emulator.runners.at(-1)!;
      expect(decodeIdentity(parseIdentityFile(after)).urn.runnerId).toBe(runner.runnerId);
    }
    // The next command sweeps whatever temp file the crash left, and says so.
    const status = await fx.run(['status', '-c', fx.dir]);
    // after-enroll leaves the enrolled key pending: a possible orphan, status's exit 15.
    expect(status.code, status.stderr).toBe(point === 'after-enroll' ? 15 : 0);
    const leftovers = (await readdir(fx.dir)).filter((n) => n.includes('.tmp-'));
    expect(leftovers).toEqual([]);
  });
});
