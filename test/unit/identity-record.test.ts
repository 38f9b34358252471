import { describe, expect, it } from 'vitest';
import { decodeIdentity, type IdentityRecord, parseIdentityFile, serializeIdentityFile } from '../../src/identity/identity-record.js';
import { KNOWN_KEYS } from '../fixtures/known-keys.js';
import { decodeError } from '../fixtures/expect-errors.js';

const A = KNOWN_KEYS[0]!;
const URN = 'urn:dd:apps:on-prem-runner:us1:1234:0c6b1c52-7a4b-4f16-9f2e-5d2b1f7e9a10';
const HASH = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';

describe('serializeIdentityFile: exact bytes (docs/protocol.md §5)', () => {
  it.each<[string, IdentityRecord, string]>([
    [
      'all fields',
      { privateKey: A.encoded, urn: URN, hostname: 'web-1.example.com', apiKeyHash: HASH },
      `{"private_key":"${A.encoded}","urn":"${URN}","hostname":"web-1.example.com","api_key_hash":"${HASH}"}`,
    ],
    ['no hostname, no hash', { privateKey: A.encoded, urn: URN }, `{"private_key":"${A.encoded}","urn":"${URN}"}`],
    [
      'empty hostname and hash are omitted',
      { privateKey: A.encoded, urn: URN, hostname: '', apiKeyHash: '' },
      `{"private_key":"${A.encoded}","urn":"${URN}"}`,
    ],
    [
      'hash only',
      { privateKey: A.encoded, urn: URN, apiKeyHash: HASH },
      `{"private_key":"${A.encoded}","urn":"${URN}","api_key_hash":"${HASH}"}`,
    ],
    ['hostname only', { privateKey: A.encoded, urn: URN, hostname: 'h' }, `{"private_key":"${A.encoded}","urn":"${URN}","hostname":"h"}`],
    [
      'orch_cluster_id is never written to the file',
      { privateKey: A.encoded, urn: URN, hostname: 'h', apiKeyHash: HASH, orchClusterId: 'c-1' },
      `{"private_key":"${A.encoded}","urn":"${URN}","hostname":"h","api_key_hash":"${HASH}"}`,
    ],
    [
      'keys in the order private_key, urn, hostname, api_key_hash whatever the input order',
      { apiKeyHash: HASH, hostname: 'h', urn: URN, privateKey: A.encoded },
      `{"private_key":"${A.encoded}","urn":"${URN}","hostname":"h","api_key_hash":"${HASH}"}`,
    ],
  ])('%s', (_name, record, bytes) => {
    const text = serializeIdentityFile(record);
    expect(text).toBe(bytes);
    expect(text.endsWith('\n')).toBe(false);
    expect(text).not.toMatch(/\s/);
  });

  it('round-trips through the parser and the full decoder', () => {
    const record: IdentityRecord = { privateKey: A.encoded, urn: URN, hostname: 'h', apiKeyHash: HASH };
    const parsed = parseIdentityFile(serializeIdentityFile(record));
    expect(parsed).toEqual(record);
    const decoded = decodeIdentity(parsed);
    expect(decoded.key.kid).toBe(A.kid);
    expect(decoded.urn).toEqual({ region: 'us1', orgId: 1234, runnerId: '0c6b1c52-7a4b-4f16-9f2e-5d2b1f7e9a10' });
  });
});

describe('parseIdentityFile', () => {
  it('accepts orch_cluster_id and reads past unknown keys (as the Go reader does), naming them', () => {
    const text = JSON.stringify({
      private_key: A.encoded,
      urn: URN,
      orch_cluster_id: 'cluster-uid',
      future_field: { a: 1 },
      hostname: 'h',
    });
    expect(parseIdentityFile(text)).toEqual({
      privateKey: A.encoded,
      urn: URN,
      orchClusterId: 'cluster-uid',
      hostname: 'h',
      unknownFields: ['future_field'],
    });
  });

  it("names a newer agent's fields (datadog-agent #56545), sorted and sanitised, at most 20 of them", () => {
    const newer = {
      authorization_type: 'wif',
      provider: 'aws',
      runner_name: 'r',
      pending: false,
      intake_mapping_id: 'm',
      authorization_version: 2,
    };
    expect(parseIdentityFile(JSON.stringify({ private_key: A.encoded, urn: URN, ...newer })).unknownFields).toEqual([
      'authorization_type',
      'authorization_version',
      'intake_mapping_id',
      'pending',
      'provider',
      'runner_name',
    ]);
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`f${String(i).padStart(2, '0')}`, i]));
    const fields = parseIdentityFile(JSON.stringify({ private_key: A.encoded, urn: URN, ...many, 'evil\u001b[2Jkey': 1 })).unknownFields!;
    expect(fields).toHaveLength(21);
    expect(fields.at(-1)).toBe('… 6 more');
    expect(fields.join('')).not.toContain('\u001b');
    // The serialised form is the agent's: unknown fields are not written (the rotation refuses without --override-agent-settings).
    expect(serializeIdentityFile(parseIdentityFile(JSON.stringify({ private_key: A.encoded, urn: URN, provider: 'aws' })))).toBe(
      JSON.stringify({ private_key: A.encoded, urn: URN }),
    );
  });

  it('accepts pretty-printed JSON with a trailing newline (what a human may have written)', () => {
    const text = `${JSON.stringify({ private_key: A.encoded, urn: URN, api_key_hash: HASH }, null, 2)}\n`;
    expect(parseIdentityFile(text)).toEqual({ privateKey: A.encoded, urn: URN, apiKeyHash: HASH });
  });

  it('treats empty and null optional fields as absent', () => {
    const text = JSON.stringify({ private_key: A.encoded, urn: URN, hostname: '', api_key_hash: null, orch_cluster_id: '' });
    expect(parseIdentityFile(text)).toEqual({ privateKey: A.encoded, urn: URN });
  });

  it.each([
    ['empty file', '', 'file'],
    ['not JSON', 'private_key=abc', 'file'],
    ['truncated JSON', `{"private_key":"${A.encoded}","urn":"${URN}"`, 'file'],
    ['a JSON array', '[]', 'file'],
    ['JSON null', 'null', 'file'],
    ['a JSON string', '"x"', 'file'],
    ['missing private_key', JSON.stringify({ urn: URN }), 'private_key'],
    ['empty private_key', JSON.stringify({ private_key: '', urn: URN }), 'private_key'],
    ['null private_key', JSON.stringify({ private_key: null, urn: URN }), 'private_key'],
    ['private_key not a string', JSON.stringify({ private_key: 5, urn: URN }), 'private_key'],
    ['missing urn', JSON.stringify({ private_key: A.encoded }), 'urn'],
    ['empty urn', JSON.stringify({ private_key: A.encoded, urn: '' }), 'urn'],
    ['urn not a string', JSON.stringify({ private_key: A.encoded, urn: ['x'] }), 'urn'],
    ['hostname not a string', JSON.stringify({ private_key: A.encoded, urn: URN, hostname: 1 }), 'hostname'],
    ['api_key_hash not a string', JSON.stringify({ private_key: A.encoded, urn: URN, api_key_hash: true }), 'api_key_hash'],
    ['orch_cluster_id not a string', JSON.stringify({ private_key: A.encoded, urn: URN, orch_cluster_id: {} }), 'orch_cluster_id'],
  ])('%s → IdentityDecodeError field %s', (_name, text, field) => {
    const err = decodeError(() => parseIdentityFile(text));
    expect(err.field).toBe(field);
    expect(err.code).toBe('IDENTITY_INVALID');
    expect(err.message).not.toContain(A.d);
  });
});

describe('decodeIdentity', () => {
  it.each([
    ['a bad key', { privateKey: `${A.encoded}=`, urn: URN }, 'private_key'],
    ['a bad urn', { privateKey: A.encoded, urn: 'urn:dd:apps:on-prem-runner:us1:x:r' }, 'urn'],
  ])('refuses a record with %s', (_name, record, field) => {
    expect(decodeError(() => decodeIdentity(record)).field).toBe(field);
  });
});
