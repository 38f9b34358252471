import { afterEach, describe, expect, it } from 'vitest';
import { generateIdentityKey, encodePrivateJwk } from '../../src/identity/index.js';
import { sanitizeServerString } from '../../src/sanitize.js';
import { forgetHeldSecrets, holdSecret, maskHeldSecrets } from '../../src/secrets-held.js';

// The one registry of held secrets (docs/security.md, "One redaction"): each secret masked as sent,
// and in the forms a server may echo it.

const KEY = '0123456789abcdefghijklmnopqrstuv';

describe('maskHeldSecrets', () => {
  afterEach(() => forgetHeldSecrets());

  it('masks a held value, naming what it was, wherever it appears', () => {
    holdSecret('API key', KEY);
    expect(maskHeldSecrets(`bad key ${KEY}; again ${KEY}.`)).toBe('bad key [redacted API key]; again [redacted API key].');
  });

  it('masks it base64, base64url, JSON-escaped and percent-encoded', () => {
    const token = 'tok/en+with"quote\\and=more-0123';
    holdSecret('bearer token', token);
    for (const form of [
      Buffer.from(token).toString('base64'),
      Buffer.from(token).toString('base64url'),
      JSON.stringify(token).slice(1, -1),
      encodeURIComponent(token),
    ]) {
      expect(maskHeldSecrets(`x ${form} y`)).toBe('x [redacted bearer token] y');
    }
  });

  it('masks the first part of a secret that ends the text (a body cut short), not a short coincidence', () => {
    holdSecret('application key', KEY);
    expect(maskHeldSecrets(`echo: ${KEY.slice(0, 20)}`)).toBe('echo: [redacted application key]');
    expect(maskHeldSecrets('version 0123456')).toBe('version 0123456');
  });

  it('leaves values shorter than 8 characters unregistered', () => {
    holdSecret('password', 'short');
    expect(maskHeldSecrets('a short word')).toBe('a short word');
  });

  it('the sanitizer masks too, including a key split by an escape sequence', () => {
    holdSecret('API key', KEY);
    expect(sanitizeServerString(`key=${KEY.slice(0, 10)}\u001b[0m${KEY.slice(10)}`)).toBe('key=[redacted API key]');
  });

  it('an identity key is held once encoded: the JWK string and its d', () => {
    const key = generateIdentityKey();
    const encoded = encodePrivateJwk(key);
    const d = (JSON.parse(Buffer.from(encoded, 'base64url').toString()) as { d: string }).d;
    expect(maskHeldSecrets(`${encoded} ${d}`)).toBe('[redacted private key] [redacted private key]');
  });
});
