/**
 * Verifies the runtime JWT of docs/protocol.md §7 with node:crypto only, so the CLI's signer (built on
 * jose) is checked by code that shares nothing with it. Mirrors upstream util.GeneratePARJWT:
 * golang-jwt header {"alg":"ES256","cty":"JWT","typ":"JWT"}, claims orgId, runnerId, iat,
 * exp = iat + 60, JOSE raw r||s signature.
 */
import { type KeyObject, verify } from 'node:crypto';
import type { EnrolledRunner } from './runner-registry.js';

const JWT_LIFETIME_SECONDS = 60;

interface JwtVerifyContext {
  orgId: number;
  maxClockSkewSeconds: number;
  nowMs: number;
  findRunner(runnerId: string): { runner: EnrolledRunner; publicKey: KeyObject } | undefined;
}

interface RunnerJwtClaims {
  orgId: number;
  runnerId: string;
  iat: number;
  exp: number;
}

type JwtVerdict = { ok: true; claims: RunnerJwtClaims } | { ok: false; reason: string };

const HEADER_MEMBERS = new Set(['alg', 'typ', 'cty']);
const CLAIM_MEMBERS = new Set(['orgId', 'runnerId', 'iat', 'exp']);
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function decodeSegment(segment: string): Buffer | undefined {
  if (!BASE64URL.test(segment)) return undefined;
  const bytes = Buffer.from(segment, 'base64url');
  // Buffer decoding ignores stray trailing bits; JWS requires the canonical unpadded form.
  return bytes.toString('base64url') === segment ? bytes : undefined;
}

function decodeJsonSegment(segment: string): Record<string, unknown> | undefined {
  const bytes = decodeSegment(segment);
  if (!bytes) return undefined;
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function verifyRunnerJwt(token: string | undefined, ctx: JwtVerifyContext): JwtVerdict {
  const fail = (reason: string): JwtVerdict => ({ ok: false, reason });
  if (token === undefined || token === '') return fail('X-Datadog-OnPrem-JWT header missing');

  const parts = token.split('.');
  if (parts.length !== 3) return fail(`JWT must have 3 dot-separated parts, got ${parts.length}`);
  const [headerB64, claimsB64, signatureB64] = parts as [string, string, string];

  const header = decodeJsonSegment(headerB64);
  if (!header) return fail('JWT header is not base64url-encoded JSON object');
  if ('kid' in header) return fail('JWT header must not carry a kid (the runner id claim selects the key)');
  if (header['alg'] !== 'ES256') return fail(`JWT alg must be ES256, got ${JSON.stringify(header['alg'])}`);
  if (header['typ'] !== 'JWT') return fail(`JWT typ must be "JWT", got ${JSON.stringify(header['typ'])}`);
  if (header['cty'] !== 'JWT') return fail(`JWT cty must be "JWT", got ${JSON.stringify(header['cty'])}`);
  const extraHeader = Object.keys(header).filter((k) => !HEADER_MEMBERS.has(k));
  if (extraHeader.length > 0) return fail(`JWT header has unexpected members: ${extraHeader.join(', ')}`);

  const claims = decodeJsonSegment(claimsB64);
  if (!claims) return fail('JWT claims are not base64url-encoded JSON object');
  const { orgId, runnerId, iat, exp } = claims;
  if (typeof orgId !== 'number' || !Number.isSafeInteger(orgId)) {
    return fail(`JWT claim orgId must be an integer JSON number, got ${JSON.stringify(orgId)}`);
  }
  if (typeof runnerId !== 'string' || runnerId === '') {
    return fail(`JWT claim runnerId must be a non-empty string, got ${JSON.stringify(runnerId)}`);
  }
  if (typeof iat !== 'number' || !Number.isSafeInteger(iat)) {
    return fail(`JWT claim iat must be an integer (seconds), got ${JSON.stringify(iat)}`);
  }
  if (typeof exp !== 'number' || !Number.isSafeInteger(exp)) {
    return fail(`JWT claim exp must be an integer (seconds), got ${JSON.stringify(exp)}`);
  }
  const extraClaims = Object.keys(claims).filter((k) => !CLAIM_MEMBERS.has(k));
  if (extraClaims.length > 0) return fail(`JWT has unexpected claims: ${extraClaims.join(', ')}`);
  if (exp !== iat + JWT_LIFETIME_SECONDS) {
    return fail(`JWT exp must be iat + ${JWT_LIFETIME_SECONDS}, got exp - iat = ${exp - iat}`);
  }

  const found = ctx.findRunner(runnerId);
  if (!found) return fail(`unknown runner ${JSON.stringify(runnerId)}`);

  const signature = decodeSegment(signatureB64);
  if (!signature) return fail('JWT signature is not base64url');
  if (signature.length !== 64) {
    return fail(`JWT signature must be 64 bytes (JOSE r||s, not DER), got ${signature.length}`);
  }
  const signingInput = Buffer.from(`${headerB64}.${claimsB64}`, 'ascii');
  const valid = verify('sha256', signingInput, { key: found.publicKey, dsaEncoding: 'ieee-p1363' }, signature);
  if (!valid) return fail("JWT signature does not verify against the runner's enrolled public key");

  if (orgId !== ctx.orgId || orgId !== found.runner.orgId) {
    return fail(`JWT orgId ${orgId} is not the org of runner ${runnerId} (${found.runner.orgId})`);
  }
  if (found.runner.revoked) return fail(`runner ${runnerId} has been revoked`);

  const now = ctx.nowMs / 1000;
  if (iat > now + ctx.maxClockSkewSeconds) {
    return fail(`JWT issued in the future: iat is ${Math.round(iat - now)} s ahead (skew allowed: ${ctx.maxClockSkewSeconds} s)`);
  }
  if (now > exp + ctx.maxClockSkewSeconds) {
    return fail(`JWT expired ${Math.round(now - exp)} s ago (skew allowed: ${ctx.maxClockSkewSeconds} s)`);
  }
  return { ok: true, claims: { orgId, runnerId, iat, exp } };
}
