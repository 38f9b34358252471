import { verify } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { generateIdentityKey } from '../../src/identity/private-jwk.js';
import { JWT_LIFETIME_SECONDS, signRunnerJwt } from '../../src/identity/runner-jwt.js';
import { KNOWN_KEYS, keyFromScalar } from '../fixtures/known-keys.js';

const A = KNOWN_KEYS[0]!;
const NOW = new Date('2025-03-04T05:06:07.890Z');
const IAT = 1741064767; // floor(NOW / 1000)
const URN = { region: 'us1', orgId: 1234567, runnerId: '0c6b1c52-7a4b-4f16-9f2e-5d2b1f7e9a10' };

function parts(jwt: string): { header: string; payload: string; signature: Buffer } {
  const [h, p, s, ...rest] = jwt.split('.');
  expect(rest).toEqual([]);
  for (const part of [h, p, s]) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
  return {
    header: Buffer.from(h!, 'base64url').toString('utf8'),
    payload: Buffer.from(p!, 'base64url').toString('utf8'),
    signature: Buffer.from(s!, 'base64url'),
  };
}

describe('signRunnerJwt (docs/protocol.md §7)', () => {
  it('header is exactly {"alg":"ES256","typ":"JWT","cty":"JWT"}, no kid', async () => {
    const jwt = await signRunnerJwt(keyFromScalar(A.dHex, A.kid).privateKey, URN, NOW);
    expect(parts(jwt).header).toBe('{"alg":"ES256","typ":"JWT","cty":"JWT"}');
    expect(decodeProtectedHeader(jwt)).not.toHaveProperty('kid');
  });

  it('claims: orgId a JSON number, runnerId a string, iat = floor(now), exp = iat + 60', async () => {
    expect(JWT_LIFETIME_SECONDS).toBe(60);
    const jwt = await signRunnerJwt(keyFromScalar(A.dHex, A.kid).privateKey, URN, NOW);
    const { payload } = parts(jwt);
    expect(payload).toBe(`{"orgId":1234567,"runnerId":"0c6b1c52-7a4b-4f16-9f2e-5d2b1f7e9a10","iat":${IAT},"exp":${IAT + 60}}`);
    const claims = JSON.parse(payload) as Record<string, unknown>;
    expect(typeof claims.orgId).toBe('number');
    expect(typeof claims.runnerId).toBe('string');
  });

  it('verifies with jose against the public key at the signing time, and expires after 60 s', async () => {
    const key = keyFromScalar(A.dHex, A.kid);
    const jwt = await signRunnerJwt(key.privateKey, URN, NOW);
    const { payload, protectedHeader } = await jwtVerify(jwt, key.publicKey, { algorithms: ['ES256'], currentDate: NOW });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', cty: 'JWT' });
    expect(payload).toEqual({ orgId: 1234567, runnerId: URN.runnerId, iat: IAT, exp: IAT + 60 });
    await expect(jwtVerify(jwt, key.publicKey, { currentDate: new Date((IAT + 61) * 1000) })).rejects.toMatchObject({
      code: 'ERR_JWT_EXPIRED',
    });
  });

  it('the signature is raw r||s (64 bytes) over header.payload, verifiable with node:crypto', async () => {
    const key = keyFromScalar(A.dHex, A.kid);
    const jwt = await signRunnerJwt(key.privateKey, URN, NOW);
    const { signature } = parts(jwt);
    expect(signature).toHaveLength(64);
    const signingInput = Buffer.from(jwt.slice(0, jwt.lastIndexOf('.')));
    expect(verify('sha256', signingInput, { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });

  it('does not verify with another key', async () => {
    const jwt = await signRunnerJwt(keyFromScalar(A.dHex, A.kid).privateKey, URN, NOW);
    await expect(jwtVerify(jwt, generateIdentityKey().publicKey, { currentDate: NOW })).rejects.toMatchObject({
      code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
    });
  });
});
