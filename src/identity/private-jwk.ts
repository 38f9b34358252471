import { createECDH, createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { IdentityDecodeError } from '../errors.js';
import { quotedServerValue } from '../sanitize.js';
import { holdSecret } from '../secrets-held.js';

// The stored private key is base64url(JSON of a private JWK) — the exact form the Go agent's go-jose
// decoder reads (docs/protocol.md §2). Member order and 32-byte coordinates are part of that contract.

const COORDINATE_BYTES = 32;
/** 32 bytes in unpadded base64url. */
const COORDINATE_CHARS = 43;
/**
 * The stored key is about 300 characters (eight short members); 2 048 leaves room for members another
 * writer may add and refuses, before decoding anything, a value no JWK writer made (docs/security.md).
 */
const MAX_ENCODED_KEY_LENGTH = 2048;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

export interface PrivateIdentityKey {
  /** node:crypto key; never serialised anywhere but through encodePrivateJwk. */
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** RFC 7638 thumbprint: the non-secret fingerprint shown to operators. */
  kid: string;
}

export function generateIdentityKey(): PrivateIdentityKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  holdSecret('private key', privateKey.export({ format: 'jwk' }).d);
  return { privateKey, publicKey, kid: thumbprintOf(publicKey) };
}

/** Left-pads to the field size: node may drop leading zero bytes, go-jose rejects short values. */
function fixedCoordinate(value: string | undefined, field: string): string {
  if (value === undefined) throw new IdentityDecodeError(field, 'missing');
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.length > COORDINATE_BYTES) throw new IdentityDecodeError(field, `is ${bytes.length} bytes, expected 32`);
  const padded = Buffer.concat([Buffer.alloc(COORDINATE_BYTES - bytes.length), bytes]);
  return padded.toString('base64url');
}

function publicCoordinates(publicKey: KeyObject): { x: string; y: string } {
  const jwk = publicKey.export({ format: 'jwk' });
  return { x: fixedCoordinate(jwk.x, 'x'), y: fixedCoordinate(jwk.y, 'y') };
}

// exported for tests: the kid checked against pinned RFC 7638 thumbprints
export function thumbprintOf(publicKey: KeyObject): string {
  const { x, y } = publicCoordinates(publicKey);
  // RFC 7638: required members only, lexicographic order, no whitespace.
  const canonical = JSON.stringify({ crv: 'P-256', kty: 'EC', x, y });
  return createHash('sha256').update(canonical).digest('base64url');
}

export function encodePrivateJwk(key: PrivateIdentityKey): string {
  const { x, y } = publicCoordinates(key.publicKey);
  const d = fixedCoordinate(key.privateKey.export({ format: 'jwk' }).d, 'd');
  const jwk = { use: 'sig', kty: 'EC', kid: key.kid, crv: 'P-256', alg: 'ES256', x, y, d };
  const encoded = Buffer.from(JSON.stringify(jwk), 'utf8').toString('base64url');
  holdSecret('private key', d);
  holdSecret('private key', encoded);
  return encoded;
}

function strictCoordinate(jwk: Record<string, unknown>, field: 'x' | 'y' | 'd'): string {
  const value = jwk[field];
  if (typeof value !== 'string' || value === '') throw new IdentityDecodeError(field, 'missing');
  if (value.length !== COORDINATE_CHARS)
    throw new IdentityDecodeError(field, `is ${value.length} characters long, expected ${COORDINATE_CHARS} (32 bytes in base64url)`);
  if (!BASE64URL.test(value)) throw new IdentityDecodeError(field, 'is not unpadded base64url');
  const length = Buffer.from(value, 'base64url').length;
  if (length !== COORDINATE_BYTES) throw new IdentityDecodeError(field, `is ${length} bytes, expected 32`);
  return value;
}

function parseJwkJson(encoded: string): Record<string, unknown> {
  if (encoded.length === 0) throw new IdentityDecodeError('private_key', 'is empty');
  if (encoded.length > MAX_ENCODED_KEY_LENGTH)
    throw new IdentityDecodeError('private_key', `is ${encoded.length} characters long (at most ${MAX_ENCODED_KEY_LENGTH})`);
  if (encoded.includes('=')) throw new IdentityDecodeError('private_key', 'has base64 padding (=), which the Go agent rejects');
  if (!BASE64URL.test(encoded)) {
    throw new IdentityDecodeError('private_key', 'contains characters outside base64url (whitespace is not tolerated by the Go agent)');
  }
  // Buffer silently drops a lone trailing character; Go's RawURLEncoding rejects it.
  if (encoded.length % 4 === 1)
    throw new IdentityDecodeError('private_key', 'is truncated base64url (a dangling final character), which the Go agent rejects');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw new IdentityDecodeError('private_key', 'does not decode to JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new IdentityDecodeError('private_key', 'does not decode to a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/** Strict inverse of encodePrivateJwk, at least as strict as go-jose plus a d↔(x,y) consistency check. */
export function decodePrivateJwk(encoded: string): PrivateIdentityKey {
  const jwk = parseJwkJson(encoded);
  if (jwk.kty !== 'EC') throw new IdentityDecodeError('kty', `is ${quotedServerValue(jwk.kty)}, expected "EC"`);
  if (jwk.crv !== 'P-256') throw new IdentityDecodeError('crv', `is ${quotedServerValue(jwk.crv)}, expected "P-256"`);
  if (jwk.alg !== undefined && jwk.alg !== 'ES256')
    throw new IdentityDecodeError('alg', `is ${quotedServerValue(jwk.alg)}, expected "ES256"`);
  const x = strictCoordinate(jwk, 'x');
  const y = strictCoordinate(jwk, 'y');
  const d = strictCoordinate(jwk, 'd');
  // Read from a file or a Secret: held (masked in any server text) whether or not it decodes further.
  holdSecret('private key', d);
  holdSecret('private key', encoded);
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' });
  } catch {
    throw new IdentityDecodeError('x', 'the point (x, y) is not on the P-256 curve');
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: { kty: 'EC', crv: 'P-256', d, x, y }, format: 'jwk' });
  } catch {
    throw new IdentityDecodeError('d', 'is not a valid P-256 private scalar for this point');
  }
  // OpenSSL may accept a d that does not belong to (x, y): derive the point from d and compare.
  const fromD = createPublicKey({ key: derivePublicJwk(d), format: 'jwk' });
  if (!fromD.equals(publicKey)) throw new IdentityDecodeError('d', 'does not match the public key (x, y)');
  const kid = thumbprintOf(publicKey);
  if (jwk.kid !== undefined && jwk.kid !== kid) {
    throw new IdentityDecodeError('kid', 'is not the RFC 7638 thumbprint of the key');
  }
  return { privateKey, publicKey, kid };
}

/** Public point computed from the scalar alone (ECDH does the scalar multiplication for us). */
function derivePublicJwk(d: string): { kty: 'EC'; crv: 'P-256'; x: string; y: string } {
  const ecdh = createECDH('prime256v1');
  try {
    ecdh.setPrivateKey(Buffer.from(d, 'base64url'));
  } catch {
    throw new IdentityDecodeError('d', 'is not a valid P-256 private scalar');
  }
  const point = ecdh.getPublicKey();
  return { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') };
}
