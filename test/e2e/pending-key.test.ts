import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodePrivateJwk } from '../../src/identity/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// A crash between a successful enrollment and the write (kill -9 at after-enroll, the built binary):
// the key that was sent is kept as <file>.pending, so the runner registered in Datadog is never one
// whose key nothing holds and nothing reports (docs/identity-lifecycle.md §3).

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

const PENDING = `${IDENTITY}.pending`;

// The killed run named itself as the key's holder: status checked its pid on this host and found it gone.
const DEAD_HOLDER = {
  host: expect.any(String),
  pid: expect.any(Number),
  deadline: expect.any(String),
  lives: false,
  checkedBy: 'process',
  why: expect.stringMatching(/^pid \d+ on host \S+ is gone$/),
};

interface StatusJson {
  possibleOrphans: {
    path: string;
    state: string;
    fingerprint: string | null;
    createdAt: string | null;
    runnerName: string | null;
    decodes: boolean;
  }[];
}

async function crashAfterEnroll(): Promise<{ before: string; orphanId: string }> {
  const first = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
  expect(first.code, first.stderr).toBe(0);
  const before = await fx.read();
  const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { PAR_IDENTITY_FAILPOINT: 'after-enroll' } });
  expect(run.signal).toBe('SIGKILL');
  return { before, orphanId: fx.emulator.runners.at(-1)!.runnerId };
}

describe('rotate-identity killed after the enrollment succeeded, before the write', () => {
  it('keeps the enrolled key as <file>.pending (0600, the registered public key) and leaves the identity in service', async () => {
    const { before } = await crashAfterEnroll();
    expect(fx.emulator.runners).toHaveLength(2);
    expect(await fx.read()).toBe(before);
    const pending = JSON.parse(await fx.read(PENDING)) as Record<string, string>;
    expect(Object.keys(pending)).toEqual(['private_key', 'created_at', 'runner_name', 'enrollment_url', 'holder']);
    expect(decodePrivateJwk(pending.private_key!).kid).toBe(fx.emulator.runners[1]!.publicKeyThumbprint);
    expect(pending.runner_name).toBe(fx.emulator.runners[1]!.name);
    expect((await stat(join(fx.dir, PENDING))).mode & 0o777).toBe(0o600);
  });

  it('status shows the possible orphan (text and --json) and exits 15, changing nothing', async () => {
    await crashAfterEnroll();
    // The lock and its takeover files are status's own (its lock step), not what it reads.
    const identityFiles = async () => (await fx.files()).filter((n) => !n.includes('.lock'));
    const files = await identityFiles();
    const orphan = fx.emulator.runners[1]!;
    const json = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(json.code, json.stderr).toBe(15);
    const status = JSON.parse(json.stdout) as StatusJson;
    expect(status.possibleOrphans).toEqual([
      {
        path: join(fx.dir, PENDING),
        state: 'pending',
        fingerprint: orphan.publicKeyThumbprint,
        createdAt: expect.any(String),
        runnerName: orphan.name,
        decodes: true,
        holder: DEAD_HOLDER,
      },
    ]);
    const human = await fx.run(['status', '-c', fx.dir]);
    expect(human.code).toBe(15);
    expect(human.stdout).toContain(`POSSIBLE ORPHAN (pending): the key ${orphan.publicKeyThumbprint}`);
    expect(human.stdout).toContain(`runner "${orphan.name}"`);
    expect(human.stdout + human.stderr).not.toContain(JSON.parse(await fx.read(PENDING)).private_key);
    expect(await identityFiles()).toEqual(files);
    expect(await fx.read(PENDING)).toBeTruthy();
  });

  it('the next rotation keeps the pending key aside, reports it, enrolls one new runner; status keeps listing it until it is deleted', async () => {
    const { orphanId } = await crashAfterEnroll();
    const orphan = fx.emulator.runners.find((r) => r.runnerId === orphanId)!;
    const pendingText = await fx.read(PENDING);
    const next = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(`possible orphan`);
    expect(next.stderr).toContain(orphan.publicKeyThumbprint);
    // One more runner for this run: the pending key was not enrolled again.
    expect(fx.emulator.runners).toHaveLength(3);
    expect(fx.emulator.runners.filter((r) => r.publicKeyThumbprint === orphan.publicKeyThumbprint)).toHaveLength(1);
    expect(parseIdentityFile(await fx.read()).urn).toMatch(new RegExp(`:${fx.emulator.runners[2]!.runnerId}$`));
    const names = await readdir(fx.dir);
    expect(names).not.toContain(PENDING);
    const aside = names.filter((n) => n.startsWith(`${IDENTITY}.pending-`));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(fx.dir, aside[0]!), 'utf8')).toBe(pendingText);
    const status = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(status.code).toBe(15);
    expect((JSON.parse(status.stdout) as StatusJson).possibleOrphans.map((o) => [o.state, o.fingerprint])).toEqual([
      ['set aside', orphan.publicKeyThumbprint],
    ]);
  });

  it('a completed rotation leaves no pending file and status exits 0', async () => {
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    expect(await fx.files()).not.toContain(PENDING);
    const status = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as StatusJson).possibleOrphans).toEqual([]);
  });

  it('a refused enrollment (401) registered nothing: no pending file is left', async () => {
    fx.emulator.script('enroll', { status: 401, body: '{"errors":["Unauthorized"]}' });
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(run.code).toBe(4);
    expect(await fx.files()).not.toContain(PENDING);
  });
});
