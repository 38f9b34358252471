import { type KeyObject, sign, verify } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import { ParError } from '../../src/errors.js';
import { decodePrivateJwk, encodePrivateJwk, generateIdentityKey, thumbprintOf } from '../../src/identity/private-jwk.js';
import { publicKeyPem } from '../../src/identity/public-pem.js';
import { encodeJson, KNOWN_KEYS, keyFromScalar, P256_GENERATOR, pointFromScalar } from '../fixtures/known-keys.js';
import { decodeError } from '../fixtures/expect-errors.js';

const SPKI_P256_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');
const A = KNOWN_KEYS[0]!;
const ONE = KNOWN_KEYS[1]!;

function literalJwk(k: { kid: string; x: string; y: string; d: string }): string {
  return `{"use":"sig","kty":"EC","kid":"${k.kid}","crv":"P-256","alg":"ES256","x":"${k.x}","y":"${k.y}","d":"${k.d}"}`;
}

describe('known-answer vectors from fixed scalars (docs/protocol.md §2)', () => {
  it('key ONE is d = 1, whose point is the published P-256 generator', () => {
    const { x, y } = pointFromScalar(ONE.dHex);
    expect(x.toString('hex')).toBe(P256_GENERATOR.xHex);
    expect(y.toString('hex')).toBe(P256_GENERATOR.yHex);
    expect(Buffer.from(ONE.x, 'base64url').toString('hex')).toBe(P256_GENERATOR.xHex);
    expect(Buffer.from(ONE.y, 'base64url').toString('hex')).toBe(P256_GENERATOR.yHex);
  });

  it('the table holds keys whose d, x and y each start with a zero byte', () => {
    const firstByte = (b64: string) => Buffer.from(b64, 'base64url')[0];
    expect(KNOWN_KEYS.filter((k) => firstByte(k.d) === 0).map((k) => k.name.split(' ')[0])).toEqual(['ONE', 'D0']);
    expect(KNOWN_KEYS.filter((k) => firstByte(k.x) === 0).map((k) => k.name.split(' ')[0])).toEqual(['X0']);
    expect(KNOWN_KEYS.filter((k) => firstByte(k.y) === 0).map((k) => k.name.split(' ')[0])).toEqual(['Y0']);
  });

  describe.each(KNOWN_KEYS)('$name', (k) => {
    it('fixture coordinates are the ECDH point of d, each exactly 32 bytes', () => {
      const { x, y } = pointFromScalar(k.dHex);
      expect(x.toString('base64url')).toBe(k.x);
      expect(y.toString('base64url')).toBe(k.y);
      expect(Buffer.from(k.d, 'base64url').toString('hex')).toBe(k.dHex);
      for (const v of [k.x, k.y, k.d]) {
        expect(v).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(Buffer.from(v, 'base64url')).toHaveLength(32);
      }
    });

    it('kid is the RFC 7638 thumbprint (ours and jose agree with the pinned value)', async () => {
      const key = keyFromScalar(k.dHex, 'unused');
      expect(thumbprintOf(key.publicKey)).toBe(k.kid);
      expect(await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x: k.x, y: k.y }, 'sha256')).toBe(k.kid);
    });

    it('encodePrivateJwk gives the exact base64url string: member order use,kty,kid,crv,alg,x,y,d, no padding', () => {
      const key = keyFromScalar(k.dHex, k.kid);
      const encoded = encodePrivateJwk(key);
      expect(encoded).toBe(k.encoded);
      expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(encoded, 'base64url').toString('utf8')).toBe(literalJwk(k));
      expect(encoded).toBe(Buffer.from(literalJwk(k), 'utf8').toString('base64url'));
    });

    it('decodePrivateJwk reads the pinned string back to the same key', () => {
      const decoded = decodePrivateJwk(k.encoded);
      expect(decoded.kid).toBe(k.kid);
      const jwk = decoded.privateKey.export({ format: 'jwk' });
      expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', x: k.x, y: k.y, d: k.d });
      expect(decoded.publicKey.equals(keyFromScalar(k.dHex, k.kid).publicKey)).toBe(true);
    });

    it('publicKeyPem is the SPKI PEM: 64-column lines, trailing newline, DER = fixed prefix + 04||x||y', () => {
      const pem = publicKeyPem(keyFromScalar(k.dHex, k.kid).publicKey);
      expect(pem).toBe(k.pem);
      const der = Buffer.concat([SPKI_P256_PREFIX, Buffer.from([4]), Buffer.from(k.x, 'base64url'), Buffer.from(k.y, 'base64url')]);
      const body = der
        .toString('base64')
        .match(/.{1,64}/g)!
        .join('\n');
      expect(pem).toBe(`-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY-----\n`);
      const lines = pem.split('\n');
      expect(lines.at(-1)).toBe('');
      expect(lines.slice(1, -2).map((l) => l.length)).toEqual([64, 60]);
    });
  });

  it('publicKeyPem adds the trailing newline when the exporter leaves it out', () => {
    const fake = { export: () => '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' } as unknown as KeyObject;
    expect(publicKeyPem(fake)).toBe('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n');
  });
});

describe('32-byte left padding when the exporter drops leading zeros', () => {
  // node 20 already pads; these fakes model an exporter that does not, as older OpenSSL builds did.
  const strip = (b64: string) => Buffer.from(b64, 'base64url').subarray(1).toString('base64url');
  const fakeKey = (jwk: Record<string, string>) => ({ export: () => jwk }) as unknown as KeyObject;

  it.each([
    ['x', KNOWN_KEYS[3]!],
    ['y', KNOWN_KEYS[4]!],
    ['d', KNOWN_KEYS[2]!],
  ] as const)('a 31-byte %s is written as 32 bytes and the output is unchanged', (field, k) => {
    const pub = { kty: 'EC', crv: 'P-256', x: k.x, y: k.y };
    const priv = { ...pub, d: k.d };
    if (field === 'd') priv.d = strip(k.d);
    else {
      pub[field] = strip(k[field]);
      priv[field] = strip(k[field]);
    }
    expect(Buffer.from(field === 'd' ? priv.d : pub[field], 'base64url')).toHaveLength(31);
    const key = { privateKey: fakeKey(priv), publicKey: fakeKey(pub), kid: k.kid };
    expect(encodePrivateJwk(key)).toBe(k.encoded);
    expect(thumbprintOf(fakeKey(pub))).toBe(k.kid);
  });

  it('a 33-byte coordinate from the exporter is refused, not truncated', () => {
    const pub = { kty: 'EC', crv: 'P-256', x: Buffer.alloc(33, 1).toString('base64url'), y: A.y };
    const err = decodeError(() => thumbprintOf(fakeKey(pub)));
    expect(err.field).toBe('x');
    expect(err.message).toBe('x: is 33 bytes, expected 32');
  });
});

describe('strict decoder: every rejection is a typed IdentityDecodeError naming the part', () => {
  const base = { use: 'sig', kty: 'EC', kid: A.kid, crv: 'P-256', alg: 'ES256', x: A.x, y: A.y, d: A.d };
  const withJwk = (patch: Record<string, unknown>, drop: string[] = []) => {
    const jwk: Record<string, unknown> = { ...base, ...patch };
    for (const k of drop) delete jwk[k];
    return encodeJson(jwk);
  };
  const b64 = (bytes: Buffer) => bytes.toString('base64url');
  const raw = (s: string) => Buffer.from(s, 'base64url');
  const padded = A.encoded + '='.repeat((4 - (A.encoded.length % 4)) % 4);
  const offCurveY = Buffer.from(raw(A.y));
  offCurveY[31] = offCurveY[31]! ^ 1;
  const N = 'ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551';
  // JSON allows trailing spaces; pad until the base64url text has no partial quantum (length % 4 == 0).
  let whole = A.encoded;
  for (let spaces = 1; whole.length % 4 !== 0; spaces++) whole = b64(Buffer.from(`${literalJwk(A)}${' '.repeat(spaces)}`));

  const cases: [string, string, string][] = [
    ['empty string', '', 'private_key'],
    ['one "=" appended', `${A.encoded}=`, 'private_key'],
    ['standard padding to a multiple of 4', padded, 'private_key'],
    ['trailing newline', `${A.encoded}\n`, 'private_key'],
    ['leading space', ` ${A.encoded}`, 'private_key'],
    ['newline in the middle (wrapped base64)', `${A.encoded.slice(0, 64)}\n${A.encoded.slice(64)}`, 'private_key'],
    ['trailing CRLF', `${A.encoded}\r\n`, 'private_key'],
    ['"+" (standard base64 alphabet)', A.encoded.replace(/-/g, '+').replace(/_/g, '/').replace(/^e/, '+'), 'private_key'],
    ['"/" character', `/${A.encoded.slice(1)}`, 'private_key'],
    ['"." character', `${A.encoded.slice(0, 10)}.${A.encoded.slice(11)}`, 'private_key'],
    ['a dangling 6-bit character (length % 4 == 1, Go RawURLEncoding rejects it)', `${whole}A`, 'private_key'],
    ['not JSON', b64(Buffer.from('not json at all')), 'private_key'],
    ['JSON array', encodeJson([base]), 'private_key'],
    ['JSON string', encodeJson('EC'), 'private_key'],
    ['JSON null', encodeJson(null), 'private_key'],
    ['JSON number', encodeJson(42), 'private_key'],
    ['kty RSA', withJwk({ kty: 'RSA' }), 'kty'],
    ['kty lowercase ec', withJwk({ kty: 'ec' }), 'kty'],
    ['kty missing', withJwk({}, ['kty']), 'kty'],
    ['crv P-384', withJwk({ crv: 'P-384' }), 'crv'],
    ['crv secp256r1 spelling', withJwk({ crv: 'secp256r1' }), 'crv'],
    ['crv missing', withJwk({}, ['crv']), 'crv'],
    ['alg ES384', withJwk({ alg: 'ES384' }), 'alg'],
    ['d missing (a public JWK)', withJwk({}, ['d']), 'd'],
    ['d empty', withJwk({ d: '' }), 'd'],
    ['d a number', withJwk({ d: 1 }), 'd'],
    ['x missing', withJwk({}, ['x']), 'x'],
    ['y missing', withJwk({}, ['y']), 'y'],
    ['d 31 bytes', withJwk({ d: b64(raw(A.d).subarray(1)) }), 'd'],
    ['d 33 bytes', withJwk({ d: b64(Buffer.concat([Buffer.alloc(1), raw(A.d)])) }), 'd'],
    ['x 31 bytes', withJwk({ x: b64(raw(A.x).subarray(1)) }), 'x'],
    ['x 33 bytes', withJwk({ x: b64(Buffer.concat([Buffer.alloc(1), raw(A.x)])) }), 'x'],
    ['y 31 bytes', withJwk({ y: b64(raw(A.y).subarray(1)) }), 'y'],
    ['y 33 bytes', withJwk({ y: b64(Buffer.concat([Buffer.alloc(1), raw(A.y)])) }), 'y'],
    ['x with base64 padding', withJwk({ x: `${A.x}=` }), 'x'],
    ['y in the standard alphabet', withJwk({ y: raw(A.y).toString('base64').replace(/=+$/, '') }), 'y'],
    ['point (x, y) not on the curve', withJwk({ y: b64(offCurveY) }), 'x'],
    ['d of another key (does not match x, y)', withJwk({ d: ONE.d }), 'd'],
    ['d = 0', withJwk({ d: b64(Buffer.alloc(32)) }), 'd'],
    ['d = n (the group order)', withJwk({ d: b64(Buffer.from(N, 'hex')) }), 'd'],
    ['d = 2^256 - 1', withJwk({ d: b64(Buffer.alloc(32, 0xff)) }), 'd'],
    ['kid present but wrong', withJwk({ kid: 'not-the-thumbprint' }), 'kid'],
    ['kid of another key', withJwk({ kid: ONE.kid }), 'kid'],
    ['kid a number', withJwk({ kid: 7 }), 'kid'],
    ['d of 100 000 characters (refused by its length, not decoded)', withJwk({ d: 'A'.repeat(100_000) }), 'private_key'],
    ['x of 44 characters', withJwk({ x: `${A.x}A` }), 'x'],
    ['a key of 2 049 characters (an extra member)', withJwk({ pad: 'p'.repeat(1500) }), 'private_key'],
  ];

  it.each(cases.map(([name, encoded, field]) => [name, field, encoded] as const))('%s → field %s', (_name, field, encoded) => {
    const err = decodeError(() => decodePrivateJwk(encoded));
    expect(err.field).toBe(field);
    expect(err).toBeInstanceOf(ParError);
    expect(err.code).toBe('IDENTITY_INVALID');
    expect(err.exitCode).toBe(7);
    expect(err.details).toEqual({ field });
    expect(err.message.startsWith(`${field}: `)).toBe(true);
    // Messages never carry key material.
    for (const secret of [A.d, ONE.d, A.encoded]) expect(err.message).not.toContain(secret);
  });

  it('the control strings themselves decode, so each rejection above is caused by its one change', () => {
    expect(whole.length % 4).toBe(0);
    expect(decodePrivateJwk(whole).kid).toBe(A.kid);
    expect(decodePrivateJwk(withJwk({})).kid).toBe(A.kid);
    expect(withJwk({})).toBe(A.encoded);
  });

  it.each([
    ['without kid', withJwk({}, ['kid'])],
    ['without use and alg', withJwk({}, ['use', 'alg'])],
    ['members in another order', encodeJson({ d: A.d, y: A.y, x: A.x, crv: 'P-256', kty: 'EC' })],
    ['with an unknown member', withJwk({ key_ops: ['sign'] })],
  ])('accepts a valid key %s, computing the kid itself', (_name, encoded) => {
    expect(decodePrivateJwk(encoded).kid).toBe(A.kid);
  });
});

describe('round trip of generated keys', () => {
  it('200 fresh keys encode, decode to the same kid, and sign/verify across the round trip', async () => {
    const message = Buffer.from('par-identity round trip');
    for (let i = 0; i < 200; i++) {
      const key = generateIdentityKey();
      expect(key.kid).toBe(thumbprintOf(key.publicKey));
      const encoded = encodePrivateJwk(key);
      expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
      const json = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Record<string, string>;
      expect(Object.keys(json)).toEqual(['use', 'kty', 'kid', 'crv', 'alg', 'x', 'y', 'd']);
      for (const f of ['x', 'y', 'd']) expect(Buffer.from(json[f]!, 'base64url')).toHaveLength(32);
      const decoded = decodePrivateJwk(encoded);
      expect(decoded.kid).toBe(key.kid);
      if (i % 20 === 0) {
        expect(await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x: json.x!, y: json.y! }, 'sha256')).toBe(key.kid);
      }
      const sig = sign('sha256', message, { key: decoded.privateKey, dsaEncoding: 'ieee-p1363' });
      expect(verify('sha256', message, { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, sig)).toBe(true);
      const sig2 = sign('sha256', message, key.privateKey);
      expect(verify('sha256', message, decoded.publicKey, sig2)).toBe(true);
    }
  });
});
