import type { KeyObject } from 'node:crypto';
import type { RunnerUrn } from './urn.js';

// Runtime authentication token (protocol §7). jose is imported lazily: only verification needs it.

export const JWT_LIFETIME_SECONDS = 60;

export async function signRunnerJwt(privateKey: KeyObject, urn: RunnerUrn, now: Date): Promise<string> {
  const { SignJWT } = await import('jose');
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ orgId: urn.orgId, runnerId: urn.runnerId })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', cty: 'JWT' })
    .setIssuedAt(iat)
    .setExpirationTime(iat + JWT_LIFETIME_SECONDS)
    .sign(privateKey);
}
