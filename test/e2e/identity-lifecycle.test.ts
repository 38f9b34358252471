import { writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildUrn, decodeIdentity, encodePrivateJwk, generateIdentityKey, serializeIdentityFile } from '../../src/identity/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// docs/identity-lifecycle.md §2: the last identity that passed the health check is never pushed out
// of the backup by one that did not. The retry pattern of issue 24 (two failed checks in a row), for
// both launchers, and a planted mark: test/e2e/hostile-verified.test.ts.

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

const kidOf = (text: string) => decodeIdentity(parseIdentityFile(text)).key.kid;
const reject = () => fx.emulator.script('health', { status: 401, body: '{"errors":["Unauthorized"]}' });

describe('the last verified identity is never lost', () => {
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
    const own = serializeIdentityFile({
      privateKey: encodePrivateJwk(generateIdentityKey()),
      urn: buildUrn({ region: 'us1', orgId: 1234567, runnerId: 'agent-own' }),
      apiKeyHash: 'x',
    });
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
