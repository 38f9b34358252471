/**
 * Checks the `public_key_pem` of an enrollment (docs/protocol.md §2): an SPKI "PUBLIC KEY" PEM block of a
 * P-256 key, 64-column base64, LF line ends and a trailing newline — the exact output of Go's
 * pem.Encode(x509.MarshalPKIXPublicKey(...)), so anything else means our encoder drifted.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';

const BEGIN = '-----BEGIN PUBLIC KEY-----\n';
const END = '-----END PUBLIC KEY-----\n';
/** SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (66 bytes) } up to the point. */
const P256_SPKI_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');
const BASE64_LINE = /^[A-Za-z0-9+/]+={0,2}$/;

type PemCheck = { ok: true; publicKey: KeyObject; thumbprint: string } | { ok: false; reason: string };

export function checkPublicKeyPem(pem: string): PemCheck {
  const fail = (reason: string): PemCheck => ({ ok: false, reason: `public_key_pem ${reason}` });
  if (pem.includes('PRIVATE KEY')) return fail('contains a private key: only the public key may be sent');
  if (pem.includes('\r')) return fail('must use LF line endings, not CRLF');
  const label = /^-----BEGIN ([^-]*)-----/.exec(pem)?.[1];
  if (label !== undefined && label !== 'PUBLIC KEY') {
    return fail(`must be a SubjectPublicKeyInfo "PUBLIC KEY" block, got "${label}"`);
  }
  if (!pem.startsWith(BEGIN)) return fail('must start with "-----BEGIN PUBLIC KEY-----" and a newline');
  if (!pem.endsWith('\n')) return fail('must end with a newline after "-----END PUBLIC KEY-----"');
  if (!pem.endsWith(`\n${END}`) || pem.indexOf('-----END') !== pem.length - END.length) {
    return fail('must end with "-----END PUBLIC KEY-----" and a single trailing newline, with nothing after it');
  }
  const lines = pem.slice(BEGIN.length, pem.length - END.length - 1).split('\n');
  for (const [i, line] of lines.entries()) {
    if (!BASE64_LINE.test(line)) return fail(`line ${i + 2} is not base64 (PEM headers and blank lines are not allowed)`);
    const last = i === lines.length - 1;
    if (!last && line.length !== 64) return fail(`line ${i + 2} has ${line.length} columns; base64 lines must be 64 columns`);
    if (last && line.length > 64) return fail(`line ${i + 2} has ${line.length} columns; base64 lines must be 64 columns`);
  }
  const b64 = lines.join('');
  const der = Buffer.from(b64, 'base64');
  // Node's decoder skips junk and tolerates missing padding; a round trip rejects both.
  if (der.toString('base64') !== b64) return fail('has invalid or non-canonical base64 padding');

  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: der, format: 'der', type: 'spki' });
  } catch (err) {
    return fail(`is not a valid SubjectPublicKeyInfo: ${(err as Error).message}`);
  }
  if (publicKey.asymmetricKeyType !== 'ec') {
    return fail(`must be an EC key, got ${publicKey.asymmetricKeyType ?? 'unknown'}`);
  }
  const curve = publicKey.asymmetricKeyDetails?.namedCurve;
  if (curve !== 'prime256v1') return fail(`must be on curve P-256 (prime256v1), got ${curve ?? 'unknown'}`);
  // Go's x509.MarshalPKIXPublicKey always emits this exact DER with the uncompressed point.
  // OpenSSL also parses (and re-exports) compressed points and odd encodings, so compare bytes.
  const jwk = publicKey.export({ format: 'jwk' });
  const canonical = Buffer.concat([
    P256_SPKI_PREFIX,
    Buffer.from([0x04]),
    Buffer.from(jwk.x ?? '', 'base64url'),
    Buffer.from(jwk.y ?? '', 'base64url'),
  ]);
  if (!canonical.equals(der)) return fail('is not the canonical DER encoding (expected an uncompressed P-256 point)');

  return { ok: true, publicKey, thumbprint: jwkThumbprint(publicKey) };
}

/** RFC 7638: SHA-256 over the required members in lexicographic order, no whitespace. */
function jwkThumbprint(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical).digest('base64url');
}
