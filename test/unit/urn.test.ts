import { describe, expect, it } from 'vitest';
import { apiKeyHash } from '../../src/identity/api-key-hash.js';
import { buildUrn, checkRunnerId, parseUrn, regionFromSite } from '../../src/identity/urn.js';
import { decodeError } from '../fixtures/expect-errors.js';

describe('buildUrn (docs/protocol.md §1)', () => {
  it.each([
    [{ region: 'us1', orgId: 2, runnerId: 'abc' }, 'urn:dd:apps:on-prem-runner:us1:2:abc'],
    [
      { region: 'eu1', orgId: 1234567, runnerId: '0c6b1c52-7a4b-4f16-9f2e-5d2b1f7e9a10' },
      'urn:dd:apps:on-prem-runner:eu1:1234567:0c6b1c52-7a4b-4f16-9f2e-5d2b1f7e9a10',
    ],
    [{ region: 'ap1', orgId: 0, runnerId: 'r' }, 'urn:dd:apps:on-prem-runner:ap1:0:r'],
    [{ region: 'us3', orgId: Number.MAX_SAFE_INTEGER, runnerId: 'x' }, 'urn:dd:apps:on-prem-runner:us3:9007199254740991:x'],
  ])('%o → %s', (parts, urn) => {
    expect(buildUrn(parts)).toBe(urn);
    expect(parseUrn(urn)).toEqual(parts);
  });

  it.each([
    ['empty region', { region: '', orgId: 1, runnerId: 'r' }, 'urn'],
    ['region with ":"', { region: 'us:1', orgId: 1, runnerId: 'r' }, 'urn'],
    ['negative org id', { region: 'us1', orgId: -1, runnerId: 'r' }, 'urn'],
    ['fractional org id', { region: 'us1', orgId: 1.5, runnerId: 'r' }, 'urn'],
    ['org id beyond 2^53 (not exact in a JS number)', { region: 'us1', orgId: 2 ** 53, runnerId: 'r' }, 'urn'],
    ['NaN org id', { region: 'us1', orgId: Number.NaN, runnerId: 'r' }, 'urn'],
    ['empty runner id', { region: 'us1', orgId: 1, runnerId: '' }, 'runner_id'],
    ['runner id with ":"', { region: 'us1', orgId: 1, runnerId: 'a:b' }, 'runner_id'],
  ])('refuses %s', (_name, parts, field) => {
    expect(decodeError(() => buildUrn(parts)).field).toBe(field);
  });

  it('checkRunnerId accepts a UUID and refuses empty and ":"', () => {
    expect(() => checkRunnerId('0c6b1c52-7a4b-4f16-9f2e-5d2b1f7e9a10')).not.toThrow();
    expect(decodeError(() => checkRunnerId('')).message).toBe('runner_id: is empty');
    expect(decodeError(() => checkRunnerId('x:y')).field).toBe('runner_id');
  });
});

describe('parseUrn (7 parts, fixed prefix, int64 org id, non-empty runner id)', () => {
  it.each([
    // Accepted like Go does, but a JS number cannot hold these exactly (see the report): only the parse is pinned.
    [
      'int64 max',
      'urn:dd:apps:on-prem-runner:us1:9223372036854775807:r',
      { region: 'us1', orgId: Number('9223372036854775807'), runnerId: 'r' },
    ],
    [
      'int64 min (Go ParseInt accepts it)',
      'urn:dd:apps:on-prem-runner:us1:-9223372036854775808:r',
      { region: 'us1', orgId: Number('-9223372036854775808'), runnerId: 'r' },
    ],
    ['leading zeros', 'urn:dd:apps:on-prem-runner:us1:007:r', { region: 'us1', orgId: 7, runnerId: 'r' }],
    ['any region string', 'urn:dd:apps:on-prem-runner:us5:42:runner-1', { region: 'us5', orgId: 42, runnerId: 'runner-1' }],
  ])('accepts %s', (_name, urn, parts) => {
    expect(parseUrn(urn)).toEqual(parts);
  });

  it.each([
    ['6 parts', 'urn:dd:apps:on-prem-runner:us1:2'],
    ['8 parts (runner id containing ":")', 'urn:dd:apps:on-prem-runner:us1:2:a:b'],
    ['empty string', ''],
    ['wrong first part', 'arn:dd:apps:on-prem-runner:us1:2:r'],
    ['wrong second part', 'urn:datadog:apps:on-prem-runner:us1:2:r'],
    ['wrong third part', 'urn:dd:app:on-prem-runner:us1:2:r'],
    ['wrong fourth part', 'urn:dd:apps:runner:us1:2:r'],
    ['upper-case prefix', 'URN:dd:apps:on-prem-runner:us1:2:r'],
    ['empty region', 'urn:dd:apps:on-prem-runner::2:r'],
    ['org id int64 max + 1 (overflow)', 'urn:dd:apps:on-prem-runner:us1:9223372036854775808:r'],
    ['org id int64 min - 1 (underflow)', 'urn:dd:apps:on-prem-runner:us1:-9223372036854775809:r'],
    ['org id 20 digits', 'urn:dd:apps:on-prem-runner:us1:99999999999999999999:r'],
    ['org id not a number', 'urn:dd:apps:on-prem-runner:us1:abc:r'],
    ['org id hex', 'urn:dd:apps:on-prem-runner:us1:0x10:r'],
    ['org id fractional', 'urn:dd:apps:on-prem-runner:us1:1.5:r'],
    ['org id with a space', 'urn:dd:apps:on-prem-runner:us1: 2:r'],
    ['org id empty', 'urn:dd:apps:on-prem-runner:us1::r'],
    ['empty runner id', 'urn:dd:apps:on-prem-runner:us1:2:'],
    ['runner id of 257 characters', `urn:dd:apps:on-prem-runner:us1:2:${'r'.repeat(257)}`],
    ['region of 64 characters', `urn:dd:apps:on-prem-runner:${'u'.repeat(64)}:2:r`],
    ['200 000 characters', `urn:dd:apps:on-prem-runner:us1:2:${'r'.repeat(200_000)}`],
  ])('refuses %s with field "urn"', (_name, urn) => {
    const err = decodeError(() => parseUrn(urn));
    expect(err.field).toBe('urn');
    expect(err.code).toBe('IDENTITY_INVALID');
  });

  it('accepts the longest URN its bounds allow (368 characters), refuses one more, and never quotes a long one', () => {
    const longest = `urn:dd:apps:on-prem-runner:${'u'.repeat(63)}:-9223372036854775808:${'r'.repeat(256)}`;
    expect(longest).toHaveLength(368);
    expect(parseUrn(longest).runnerId).toHaveLength(256);
    const huge = `urn:dd:apps:on-prem-runner:us1:2:${'r'.repeat(200_000)}`;
    const err = decodeError(() => parseUrn(huge));
    expect(err.message).toBe('urn: is 200033 characters long (at most 368); not printed');
    expect(decodeError(() => parseUrn(`${longest}x`)).message).toMatch(/at most 368/);
  });

  it('names the part count in the message', () => {
    expect(decodeError(() => parseUrn('urn:dd:apps:on-prem-runner:us1:2:a:b')).message).toBe("urn: has 8 ':'-separated parts, expected 7");
  });
});

describe('regionFromSite (PAR/adapters/regions)', () => {
  it.each([
    ['datadoghq.eu', 'eu1'],
    ['us3.datadoghq.com', 'us3'],
    ['us5.datadoghq.com', 'us5'],
    ['ap1.datadoghq.com', 'ap1'],
    ['ap2.datadoghq.com', 'ap2'],
    ['datadoghq.com', 'us1'],
    ['ddog-gov.com', 'us1'],
    ['datad0g.com', 'us1'],
    ['example.com', 'us1'],
  ])('%s → %s', (site, region) => {
    expect(regionFromSite(site)).toBe(region);
  });
});

describe('apiKeyHash (docs/protocol.md §4): lowercase hex SHA-256 of the raw key', () => {
  it.each([
    // FIPS 180-2 test vectors.
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ])('%j → %s', (key, hash) => {
    expect(apiKeyHash(key)).toBe(hash);
  });

  it('hashes the string as given (no trimming) and always gives 64 lowercase hex characters', () => {
    const key = '0123456789abcdef0123456789ABCDEF';
    expect(apiKeyHash(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(apiKeyHash(` ${key}`)).not.toBe(apiKeyHash(key));
  });
});

describe('hostile runner ids', () => {
  it.each([
    ['an ANSI escape', 'abc\u001b[2Jdef'],
    ['a newline', 'abc\nINFO forged'],
    ['a C1 control', 'abc\u009bdef'],
    ['a bidi override', 'abc\u202edef'],
  ])('a runner id with %s is refused without printing it', (_, runnerId) => {
    expect(() => checkRunnerId(runnerId)).toThrow('runner_id: contains control or formatting characters (not printed)');
    expect(() => parseUrn(`urn:dd:apps:on-prem-runner:us1:1:${runnerId}`)).toThrow(
      'urn: contains control or formatting characters (not printed)',
    );
  });

  it('an overlong runner id is refused', () => {
    expect(() => checkRunnerId('r'.repeat(257))).toThrow('is 257 characters long');
    expect(() => checkRunnerId('r'.repeat(256))).not.toThrow();
  });
});
