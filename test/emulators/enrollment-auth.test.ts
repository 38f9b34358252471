import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_API_KEY,
  DEFAULT_APP_KEY,
  DEFAULT_FORBIDDEN_APP_KEY,
  type EnrollmentEmulator,
  ROUTE_PATHS,
  startEnrollmentEmulator,
} from '../../emulators/enrollment/index.js';
import { enrollmentBody, enrollmentHeaders, newRunnerKeyPair } from '../../emulators/enrollment/known-good-requests.js';

let emu: EnrollmentEmulator;
const keys = newRunnerKeyPair();
const goodBody = JSON.stringify(enrollmentBody({ publicKeyPem: keys.publicKeyPem }));

beforeAll(async () => {
  emu = await startEnrollmentEmulator();
});
afterAll(() => emu.close());
beforeEach(() => emu.reset({ runners: true }));

async function post(
  target: EnrollmentEmulator,
  route: 'enroll' | 'enroll_api_key_only',
  headers: Record<string, string | string[]>,
  body = goodBody,
) {
  const res = await request(`${target.url}${ROUTE_PATHS[route]}`, { method: 'POST', headers, body });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: JSON.parse(text) as unknown };
}

function without(headers: Record<string, string>, name: string): Record<string, string> {
  const copy = { ...headers };
  delete copy[name];
  return copy;
}

describe('owned enrollment (API key + application key)', () => {
  const owned = enrollmentHeaders('enroll');

  it.each([
    ['no DD-API-KEY', without(owned, 'DD-API-KEY'), /DD-API-KEY header missing/],
    ['empty DD-API-KEY', { ...owned, 'DD-API-KEY': '' }, /DD-API-KEY header missing/],
    ['unknown DD-API-KEY', { ...owned, 'DD-API-KEY': 'f'.repeat(32) }, /not a valid API key/],
    ['the app key sent as API key', { ...owned, 'DD-API-KEY': DEFAULT_APP_KEY }, /not a valid API key/],
    ['no DD-APPLICATION-KEY', without(owned, 'DD-APPLICATION-KEY'), /DD-APPLICATION-KEY header missing/],
    ['unknown DD-APPLICATION-KEY', { ...owned, 'DD-APPLICATION-KEY': 'e'.repeat(40) }, /not a valid application key/],
    ['the API key sent as app key', { ...owned, 'DD-APPLICATION-KEY': DEFAULT_API_KEY }, /not a valid application key/],
  ])('401 {"errors":["Unauthorized"]} for %s', async (_name, headers, reason) => {
    const answer = await post(emu, 'enroll', headers);
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ errors: ['Unauthorized'] });
    expect(emu.requests[0]!.detail).toMatch(reason);
    expect(emu.runners).toHaveLength(0);
  });

  it('401 when the API key is sent twice (one header, one value)', async () => {
    const answer = await post(emu, 'enroll', { ...owned, 'DD-API-KEY': [DEFAULT_API_KEY, DEFAULT_API_KEY] });
    expect(answer.status).toBe(401);
    expect(emu.requests[0]!.headers['dd-api-key']).toBe(`${DEFAULT_API_KEY}, ${DEFAULT_API_KEY}`);
  });

  it('403 {"errors":["Forbidden"]} for an application key without the scope', async () => {
    const answer = await post(emu, 'enroll', { ...owned, 'DD-APPLICATION-KEY': DEFAULT_FORBIDDEN_APP_KEY });
    expect(answer.status).toBe(403);
    expect(answer.json).toEqual({ errors: ['Forbidden'] });
    expect(emu.runners).toHaveLength(0);
  });

  it('judges credentials before the body: a bad body with no key is 401, not 400', async () => {
    const answer = await post(emu, 'enroll', without(owned, 'DD-API-KEY'), '{not json');
    expect(answer.status).toBe(401);
  });

  it('a bad body with good keys is 400 (so the case above can fail)', async () => {
    expect((await post(emu, 'enroll', owned, '{not json')).status).toBe(400);
  });
});

describe('API-key-only enrollment', () => {
  const apiKeyOnly = enrollmentHeaders('enroll_api_key_only');

  it('enrolls with the API key alone', async () => {
    const answer = await post(emu, 'enroll_api_key_only', apiKeyOnly);
    expect(answer.status).toBe(200);
    expect(emu.runners).toHaveLength(1);
    expect(emu.runners[0]!.enrolledVia).toBe('enroll_api_key_only');
  });

  it('rejects a DD-APPLICATION-KEY there with 400 and a clear detail', async () => {
    const answer = await post(emu, 'enroll_api_key_only', { ...apiKeyOnly, 'DD-APPLICATION-KEY': DEFAULT_APP_KEY });
    expect(answer.status).toBe(400);
    const detail = (answer.json as { errors: { detail: string; source: { header: string } }[] }).errors[0]!;
    expect(detail.detail).toMatch(/DD-APPLICATION-KEY must not be sent to \/api\/unstable\/on_prem_runners\/api_key_only/);
    expect(detail.source.header).toBe('DD-APPLICATION-KEY');
    expect(emu.runners).toHaveLength(0);
  });

  it('rejects even an empty DD-APPLICATION-KEY header there', async () => {
    expect((await post(emu, 'enroll_api_key_only', { ...apiKeyOnly, 'DD-APPLICATION-KEY': '' })).status).toBe(400);
  });

  it.each([
    ['no DD-API-KEY', without(apiKeyOnly, 'DD-API-KEY')],
    ['unknown DD-API-KEY', { ...apiKeyOnly, 'DD-API-KEY': '0'.repeat(32) }],
  ])('401 for %s', async (_name, headers) => {
    const answer = await post(emu, 'enroll_api_key_only', headers);
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ errors: ['Unauthorized'] });
  });

  it('applies the same validation as owned enrollment', async () => {
    const answer = await post(emu, 'enroll_api_key_only', without(apiKeyOnly, 'Accept'));
    expect(answer.status).toBe(400);
  });
});

describe('configured keys', () => {
  let custom: EnrollmentEmulator;
  beforeAll(async () => {
    custom = await startEnrollmentEmulator({
      apiKeys: ['api-one', 'api-two'],
      appKeys: ['app-one'],
      forbiddenAppKeys: ['app-readonly'],
      orgId: 42,
    });
  });
  afterAll(() => custom.close());

  it('accepts any configured API key and reports the configured org', async () => {
    for (const apiKey of ['api-one', 'api-two']) {
      const answer = await post(custom, 'enroll', enrollmentHeaders('enroll', { apiKey, appKey: 'app-one' }));
      expect(answer.status).toBe(200);
      expect((answer.json as { data: { attributes: { org_id: number } } }).data.attributes.org_id).toBe(42);
    }
    expect(custom.runners.map((r) => r.orgId)).toEqual([42, 42]);
  });

  it('no longer accepts the default keys', async () => {
    expect((await post(custom, 'enroll', enrollmentHeaders('enroll'))).status).toBe(401);
    const defaultApp = enrollmentHeaders('enroll', { apiKey: 'api-one' });
    expect((await post(custom, 'enroll', defaultApp)).status).toBe(401);
  });

  it('forbids the configured forbidden key', async () => {
    const answer = await post(custom, 'enroll', enrollmentHeaders('enroll', { apiKey: 'api-one', appKey: 'app-readonly' }));
    expect(answer.status).toBe(403);
  });

  it('refuses contradictory or empty key options', async () => {
    await expect(startEnrollmentEmulator({ appKeys: ['k'], forbiddenAppKeys: ['k'] })).rejects.toThrow(/both accepted and forbidden/);
    await expect(startEnrollmentEmulator({ apiKeys: [''] })).rejects.toThrow(/non-empty/);
    await expect(startEnrollmentEmulator({ orgId: 1.5 })).rejects.toThrow(/orgId/);
  });
});

describe('GET /api/v2/validate_keys (docs/protocol.md §13)', () => {
  async function check(headers: Record<string, string>) {
    const res = await request(`${emu.url}${ROUTE_PATHS.validate_keys}`, { method: 'GET', headers });
    return { status: res.statusCode, json: (await res.body.json()) as unknown };
  }

  it('answers 200 {"status":"ok"} for two valid keys, a key without the enrollment scope included', async () => {
    expect(await check({ 'DD-API-KEY': DEFAULT_API_KEY, 'DD-APPLICATION-KEY': DEFAULT_APP_KEY })).toEqual({
      status: 200,
      json: { status: 'ok' },
    });
    expect(await check({ 'DD-API-KEY': DEFAULT_API_KEY, 'DD-APPLICATION-KEY': DEFAULT_FORBIDDEN_APP_KEY })).toEqual({
      status: 200,
      json: { status: 'ok' },
    });
  });

  it.each([
    ['an unknown application key', { 'DD-API-KEY': DEFAULT_API_KEY, 'DD-APPLICATION-KEY': 'f'.repeat(40) }],
    ['no application key', { 'DD-API-KEY': DEFAULT_API_KEY }],
    ['an unknown API key', { 'DD-API-KEY': 'f'.repeat(32), 'DD-APPLICATION-KEY': DEFAULT_APP_KEY }],
  ])('answers 403 in the bare error form for %s', async (_name, headers) => {
    expect(await check(headers)).toEqual({ status: 403, json: { errors: ['Forbidden'] } });
  });
});
