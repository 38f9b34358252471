import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildUrn, decodeIdentity, encodePrivateJwk, generateIdentityKey, parseIdentityFile, serializeIdentityFile } from '../../src/identity/index.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// docs/identity-lifecycle.md §2: the last identity that passed the health check is never pushed out
// of the backup by one that did not.

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

const kidOf = (text: string) => decodeIdentity(parseIdentityFile(text)).key.kid;
const urnOf = (text: string) => parseIdentityFile(text).urn;
const reject = () => fx.emulator.script('health', { status: 401, body: '{"errors":["Unauthorized"]}' });

describe('the last verified identity is never lost', () => {
  it('two rotations whose check fails keep the verified identity as the backup; status names it; rollback restores it', async () => {
    const seed = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(seed.code, seed.stderr).toBe(0);
    const verified = await fx.read();
    const mark = JSON.parse(await fx.read(`${IDENTITY}.verified`)) as Record<string, string>;
    expect(mark).toMatchObject({ fingerprint: kidOf(verified), urn: urnOf(verified) });
    expect((await stat(join(fx.dir, `${IDENTITY}.verified`))).mode & 0o777).toBe(0o600);

    reject();
    const first = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(first.code, first.stderr).toBe(8);
    const unverified = await fx.read();
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(verified);

    const between = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(between.code, between.stderr).toBe(0);
    expect(JSON.parse(between.stdout).lastVerified).toMatchObject({ fingerprint: kidOf(verified), urn: urnOf(verified), is: 'previous' });

    reject();
    const second = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(second.code, second.stderr).toBe(8);
    // The old code put `unverified` here: the verified identity was then on disk nowhere.
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(verified);
    expect(second.stderr).toContain(`${urnOf(unverified)} (in service, never verified) is replaced and not kept`);

    const human = await fx.run(['status', '-c', fx.dir]);
    expect(human.stdout).toContain(`last verified: ${urnOf(verified)} (fingerprint ${kidOf(verified)})`);
    expect(human.stdout).toContain('the PREVIOUS identity');

    const back = await fx.run(['rollback', '-c', fx.dir]);
    expect(back.code, back.stderr).toBe(0);
    expect(await fx.read()).toBe(verified);
    const after = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(JSON.parse(after.stdout).lastVerified).toMatchObject({ fingerprint: kidOf(verified), is: 'current' });
  });

  it('a rotation that passes moves the mark to the new identity and keeps the replaced one as the backup', async () => {
    expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(0);
    const first = await fx.read();
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(first);
    const status = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(JSON.parse(status.stdout).lastVerified).toMatchObject({ fingerprint: kidOf(await fx.read()), is: 'current' });
  });

  it('an identity the agent enrolled by itself after a failed rotation is kept as the backup as usual', async () => {
    expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(0);
    reject();
    expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(8);
    // The agent re-enrolls at start (another hostname, say) and writes its own identity: it was not ours to judge.
    const own = serializeIdentityFile({ privateKey: encodePrivateJwk(generateIdentityKey()), urn: buildUrn({ region: 'us1', orgId: 1234567, runnerId: 'agent-own' }), apiKeyHash: 'x' });
    await writeFile(fx.identityPath, own, { mode: 0o600 });
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(await fx.read(`${IDENTITY}.bak`)).toBe(own);
  });

  it('status without a mark says so (lastVerified null)', async () => {
    expect((await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'])).code).toBe(0);
    const status = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(JSON.parse(status.stdout).lastVerified).toBeNull();
  });
});
