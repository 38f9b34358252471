import { type KeyObject, sign } from 'node:crypto';
import { holdSecret } from '../secrets-held.js';
import type { RunnerUrn } from './urn.js';

// Runtime authentication token (docs/protocol.md §7): a compact JWS, ES256 over `header.payload` with the
// signature as raw r||s (JWA RFC 7518 §3.4). Signed with node:crypto directly: jose signs through
// WebCrypto, whose modules (plus jose's own chunk) cost a rotation about 3 MiB of peak RSS for one
// signature; the tokens are the same (test/unit/runner-jwt.test.ts verifies them with jose).

// exported for tests: the test checks exp - iat against it
export const JWT_LIFETIME_SECONDS = 60;

const HEADER = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', cty: 'JWT' })).toString('base64url');

export async function signRunnerJwt(privateKey: KeyObject, urn: RunnerUrn, now: Date): Promise<string> {
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new TypeError('ES256 needs a P-256 private key');
  }
  const iat = Math.floor(now.getTime() / 1000);
  const payload = Buffer.from(JSON.stringify({ orgId: urn.orgId, runnerId: urn.runnerId, iat, exp: iat + JWT_LIFETIME_SECONDS })).toString(
    'base64url',
  );
  const input = `${HEADER}.${payload}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  const token = `${input}.${signature.toString('base64url')}`;
  // The whole token and its signature (header and payload are not secret, and common to many tokens).
  holdSecret('runner token', token);
  holdSecret('runner token', signature.toString('base64url'));
  return token;
}
