import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, type TestContext } from 'vitest';
import { decodeIdentity, parseIdentityFile, serializeIdentityFile } from '../../src/identity/identity-record.js';
import { decodePrivateJwk, encodePrivateJwk, generateIdentityKey, type PrivateIdentityKey } from '../../src/identity/private-jwk.js';
import { publicKeyPem } from '../../src/identity/public-pem.js';
import { signRunnerJwt } from '../../src/identity/runner-jwt.js';
import { encodeJson, KNOWN_KEYS, keyFromScalar } from '../fixtures/known-keys.js';
import { findPython, pythonsOnPath } from '../fixtures/python.js';

// Proves that a JWK decoder and an ES256 verifier not written here (Debian's python3-cryptography,
// i.e. OpenSSL, plus python3-jwcrypto when installed) accept what par-identity writes, and reject the
// malformed variants the Go agent rejects.

// python3 from PATH: the first that has both verifiers, else the first that has cryptography.
const PYTHON = findPython(['cryptography', 'jwcrypto']) ?? findPython(['cryptography']);
const SCRIPT = readFileSync(fileURLToPath(new URL('../fixtures/external_verify.py', import.meta.url)), 'utf8');
const NOW = new Date('2025-03-04T05:06:07Z');
const IAT = NOW.getTime() / 1000;
const URN = { region: 'eu1', orgId: 1234567, runnerId: '0c6b1c52-7a4b-4f16-9f2e-5d2b1f7e9a10' };

const unavailable = PYTHON
  ? undefined
  : `no python3 on PATH can import cryptography (tried: ${pythonsOnPath().join(', ') || 'none found'}): install the Debian package python3-cryptography`;

/** Skips locally without python3-cryptography; in CI (CI=true) a missing verifier is a failure. */
function requireVerifier(ctx: TestContext): void {
  if (!unavailable) return;
  if (process.env.CI === 'true') throw new Error(unavailable);
  ctx.skip(unavailable);
}

interface Case {
  name: string;
  private_key: string;
  kid: string;
  jwt: string;
  pem: string;
}

interface Result {
  name: string;
  ok: boolean;
  stage?: string;
  error?: string;
  kid?: string;
  claims?: Record<string, unknown>;
  verifiers?: string[];
}

function runVerifier(cases: Case[]): { results: Result[]; jwcrypto: boolean } {
  const run = spawnSync(PYTHON!, ['-c', SCRIPT], { input: JSON.stringify({ cases }), encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`python verifier exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout) as { results: Result[]; jwcrypto: boolean };
}

async function caseFor(name: string, key: PrivateIdentityKey): Promise<Case> {
  return {
    name,
    private_key: encodePrivateJwk(key),
    kid: key.kid,
    jwt: await signRunnerJwt(key.privateKey, URN, NOW),
    pem: publicKeyPem(key.publicKey),
  };
}

describe('an independent verifier (python3-cryptography, OpenSSL) accepts our output', () => {
  it('fixed keys (leading-zero d, x, y) and 25 generated keys: JWK, kid, ES256 JWT and SPKI PEM all check out', async (ctx) => {
    requireVerifier(ctx);
    const cases: Case[] = [];
    for (const k of KNOWN_KEYS) {
      const c = await caseFor(k.name, keyFromScalar(k.dHex, k.kid));
      expect(c.private_key).toBe(k.encoded);
      expect(c.pem).toBe(k.pem);
      cases.push(c);
    }
    for (let i = 0; i < 25; i++) cases.push(await caseFor(`generated ${i}`, generateIdentityKey()));
    // The key string exactly as it sits in an identity file.
    const fileText = serializeIdentityFile({
      privateKey: cases[0]!.private_key,
      urn: 'urn:dd:apps:on-prem-runner:eu1:1234567:r',
      hostname: 'h',
    });
    const fromFile = decodeIdentity(parseIdentityFile(fileText));
    cases.push({ ...(await caseFor('read back from an identity file', fromFile.key)), private_key: fromFile.record.privateKey });

    const { results, jwcrypto } = runVerifier(cases);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results).toHaveLength(cases.length);
    // .ci/run installs python3-jwcrypto, so CI must exercise the second verifier as well.
    if (process.env.CI === 'true') expect(jwcrypto).toBe(true);
    const verifiers = jwcrypto ? ['cryptography', 'jwcrypto'] : ['cryptography'];
    results.forEach((r, i) => {
      expect(r.name).toBe(cases[i]!.name);
      expect(r.kid).toBe(cases[i]!.kid);
      expect(r.claims).toEqual({ orgId: 1234567, runnerId: URN.runnerId, iat: IAT, exp: IAT + 60 });
      expect(r.verifiers).toEqual(verifiers);
    });
  });

  it('rejects the malformed variants the Go agent rejects, as our own decoder does (the verifier can fail)', async (ctx) => {
    requireVerifier(ctx);
    const A = KNOWN_KEYS[0]!;
    const good = await caseFor('good', keyFromScalar(A.dHex, A.kid));
    const other = await caseFor('other', keyFromScalar(KNOWN_KEYS[1]!.dHex, KNOWN_KEYS[1]!.kid));
    const jwk = JSON.parse(Buffer.from(A.encoded, 'base64url').toString('utf8')) as Record<string, string>;
    let whole = A.encoded;
    for (let n = 1; whole.length % 4 !== 0; n++) whole = Buffer.from(`${JSON.stringify(jwk)}${' '.repeat(n)}`).toString('base64url');
    const signature = good.jwt.slice(good.jwt.lastIndexOf('.') + 1);
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;

    const bad: [Case, string][] = [
      [{ ...good, name: 'padded base64', private_key: `${A.encoded}${'='.repeat((4 - (A.encoded.length % 4)) % 4 || 4)}` }, 'private_key'],
      [{ ...good, name: 'dangling character', private_key: `${whole}A` }, 'private_key'],
      [{ ...good, name: 'trailing newline', private_key: `${A.encoded}\n` }, 'private_key'],
      [{ ...good, name: 'd of another key', private_key: encodeJson({ ...jwk, d: KNOWN_KEYS[1]!.d }) }, 'jwk'],
      [
        {
          ...good,
          name: '31-byte x',
          private_key: encodeJson({ ...jwk, x: Buffer.from(A.x, 'base64url').subarray(1).toString('base64url') }),
        },
        'x',
      ],
      [{ ...good, name: 'wrong kid', private_key: encodeJson({ ...jwk, kid: KNOWN_KEYS[1]!.kid }) }, 'kid'],
      [{ ...good, name: 'tampered JWT signature', jwt: `${good.jwt.slice(0, good.jwt.lastIndexOf('.') + 1)}${flipped}` }, 'jwt'],
      [{ ...good, name: 'JWT signed by another key', jwt: other.jwt }, 'jwt'],
      [{ ...good, name: 'PEM of another key', pem: other.pem }, 'pem'],
    ];
    const { results } = runVerifier([good, ...bad.map(([c]) => c)]);
    expect(results[0]).toMatchObject({ name: 'good', ok: true });
    expect(results.slice(1).map((r) => [r.name, r.ok, r.stage])).toEqual(bad.map(([c, stage]) => [c.name, false, stage]));
    // Our decoder refuses every malformed key string too.
    for (const [c, stage] of bad) {
      if (['private_key', 'jwk', 'x', 'kid'].includes(stage)) expect(() => decodePrivateJwk(c.private_key), c.name).toThrow();
    }
  });
});
