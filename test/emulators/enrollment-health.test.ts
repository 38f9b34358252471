import { randomUUID, sign } from 'node:crypto';
import { SignJWT } from 'jose';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type EnrollmentEmulator, ROUTE_PATHS, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import {
  enrollmentBody,
  enrollmentHeaders,
  healthCheckRequest,
  newRunnerKeyPair,
  type RunnerKeyPair,
  signRunnerJwt,
} from '../../emulators/enrollment/known-good-requests.js';

let emu: EnrollmentEmulator;

beforeAll(async () => {
  emu = await startEnrollmentEmulator();
});
afterAll(() => emu.close());
beforeEach(() => emu.reset({ runners: true }));

async function enrollRunner(target: EnrollmentEmulator = emu): Promise<{ runnerId: string; keys: RunnerKeyPair }> {
  const keys = newRunnerKeyPair();
  const res = await request(`${target.url}${ROUTE_PATHS.enroll}`, {
    method: 'POST',
    headers: enrollmentHeaders('enroll'),
    body: JSON.stringify(enrollmentBody({ publicKeyPem: keys.publicKeyPem })),
  });
  const json = (await res.body.json()) as { data: { id: string } };
  expect(res.statusCode).toBe(200);
  return { runnerId: json.data.id, keys };
}

async function healthCheck(
  jwt: string | undefined,
  change: (headers: Record<string, string>, query: URLSearchParams) => void = () => {},
  target: EnrollmentEmulator = emu,
) {
  const { path, headers } = healthCheckRequest(jwt ?? '');
  if (jwt === undefined) delete headers['X-Datadog-OnPrem-JWT'];
  const url = new URL(`${target.url}${path}`);
  change(headers, url.searchParams);
  const res = await request(url, { method: 'GET', headers });
  const text = await res.body.text();
  const json = JSON.parse(text) as { status?: string; errors?: { detail: string }[] };
  return { status: res.statusCode, json, headers: res.headers, detail: json.errors?.map((e) => e.detail).join(' | ') ?? '' };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** Signs arbitrary header and payload objects, so each test can break exactly one thing. */
function rawJwt(keys: RunnerKeyPair, header: unknown, payload: unknown, dsaEncoding: 'ieee-p1363' | 'der' = 'ieee-p1363') {
  const input = `${b64(header)}.${b64(payload)}`;
  const signature = sign('sha256', Buffer.from(input), { key: keys.privateKey, dsaEncoding });
  return `${input}.${signature.toString('base64url')}`;
}

describe('accepted health checks', () => {
  it('accepts a JWT made as upstream GeneratePARJWT makes it', async () => {
    const { runnerId, keys } = await enrollRunner();
    const answer = await healthCheck(signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId }));
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ status: 'ok' });
    expect(answer.headers['x-server-time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('accepts a JWT signed by jose (an implementation independent of the verifier)', async () => {
    const { runnerId, keys } = await enrollRunner();
    const iat = nowSeconds();
    const jwt = await new SignJWT({ orgId: emu.orgId, runnerId })
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT', cty: 'JWT' })
      .setIssuedAt(iat)
      .setExpirationTime(iat + 60)
      .sign(keys.privateKey);
    expect((await healthCheck(jwt)).status).toBe(200);
  });

  it('keeps the old runner valid after a second enrollment', async () => {
    const old = await enrollRunner();
    const fresh = await enrollRunner();
    const oldJwt = signRunnerJwt(old.keys.privateKey, { orgId: emu.orgId, runnerId: old.runnerId });
    const freshJwt = signRunnerJwt(fresh.keys.privateKey, { orgId: emu.orgId, runnerId: fresh.runnerId });
    expect((await healthCheck(oldJwt)).status).toBe(200);
    expect((await healthCheck(freshJwt)).status).toBe(200);
  });
});

describe('rejected JWTs (401 with a reason)', () => {
  type Case = [name: string, make: (r: { runnerId: string; keys: RunnerKeyPair }) => string | undefined, reason: RegExp];
  const good = { alg: 'ES256', cty: 'JWT', typ: 'JWT' };
  const claims = (runnerId: string, extra: Record<string, unknown> = {}) => {
    const iat = nowSeconds();
    return { orgId: emu.orgId, runnerId, iat, exp: iat + 60, ...extra };
  };
  const cases: Case[] = [
    ['no JWT header', () => undefined, /X-Datadog-OnPrem-JWT header missing/],
    [
      'not three parts',
      ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId)).split('.').slice(0, 2).join('.'),
      /3 dot-separated parts/,
    ],
    [
      'header not JSON',
      ({ keys, runnerId }) => `bm90anNvbg.${rawJwt(keys, good, claims(runnerId)).split('.').slice(1).join('.')}`,
      /header is not base64url-encoded JSON/,
    ],
    ['padded base64', ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId)).replace('.', '=.'), /header is not base64url/],
    ['alg ES384', ({ keys, runnerId }) => rawJwt(keys, { ...good, alg: 'ES384' }, claims(runnerId)), /alg must be ES256, got "ES384"/],
    ['alg none', ({ keys, runnerId }) => rawJwt(keys, { ...good, alg: 'none' }, claims(runnerId)), /alg must be ES256, got "none"/],
    ['alg HS256', ({ keys, runnerId }) => rawJwt(keys, { ...good, alg: 'HS256' }, claims(runnerId)), /alg must be ES256/],
    ['typ missing', ({ keys, runnerId }) => rawJwt(keys, { alg: 'ES256', cty: 'JWT' }, claims(runnerId)), /typ must be "JWT"/],
    [
      'typ jwt (lower case)',
      ({ keys, runnerId }) => rawJwt(keys, { ...good, typ: 'jwt' }, claims(runnerId)),
      /typ must be "JWT", got "jwt"/,
    ],
    ['cty missing', ({ keys, runnerId }) => rawJwt(keys, { alg: 'ES256', typ: 'JWT' }, claims(runnerId)), /cty must be "JWT"/],
    ['cty json', ({ keys, runnerId }) => rawJwt(keys, { ...good, cty: 'json' }, claims(runnerId)), /cty must be "JWT"/],
    ['kid present', ({ keys, runnerId }) => rawJwt(keys, { ...good, kid: 'thumbprint' }, claims(runnerId)), /must not carry a kid/],
    [
      'extra header member',
      ({ keys, runnerId }) => rawJwt(keys, { ...good, jku: 'https://x' }, claims(runnerId)),
      /unexpected members: jku/,
    ],
    [
      'orgId a string',
      ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId, { orgId: String(emu.orgId) })),
      /orgId must be an integer JSON number/,
    ],
    ['orgId missing', ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId, { orgId: undefined })), /orgId must be an integer/],
    [
      'runnerId missing',
      ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId, { runnerId: undefined })),
      /runnerId must be a non-empty string/,
    ],
    [
      'runnerId a number',
      ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId, { runnerId: 7 })),
      /runnerId must be a non-empty string/,
    ],
    ['iat missing', ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId, { iat: undefined })), /iat must be an integer/],
    [
      'iat fractional',
      ({ keys, runnerId }) => {
        const iat = nowSeconds() + 0.5;
        return rawJwt(keys, good, claims(runnerId, { iat, exp: iat + 60 }));
      },
      /iat must be an integer/,
    ],
    ['exp missing', ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId, { exp: undefined })), /exp must be an integer/],
    [
      'exp = iat + 120',
      ({ keys, runnerId }) => {
        const iat = nowSeconds();
        return signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId, iat, exp: iat + 120 });
      },
      /exp must be iat \+ 60, got exp - iat = 120/,
    ],
    [
      'exp = iat + 59',
      ({ keys, runnerId }) => {
        const iat = nowSeconds();
        return signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId, iat, exp: iat + 59 });
      },
      /exp - iat = 59/,
    ],
    ['extra claim', ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId, { sub: 'x' })), /unexpected claims: sub/],
    [
      'expired',
      ({ keys, runnerId }) => signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId, iat: nowSeconds() - 600 }),
      /JWT expired/,
    ],
    [
      'issued in the future',
      ({ keys, runnerId }) => signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId, iat: nowSeconds() + 600 }),
      /issued in the future/,
    ],
    ['unknown runner', ({ keys }) => signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId: randomUUID() }), /unknown runner/],
    [
      'signed by another key',
      ({ runnerId }) => signRunnerJwt(newRunnerKeyPair().privateKey, { orgId: emu.orgId, runnerId }),
      /signature does not verify/,
    ],
    [
      'DER signature instead of r||s',
      ({ keys, runnerId }) => rawJwt(keys, good, claims(runnerId), 'der'),
      /signature must be 64 bytes \(JOSE r\|\|s, not DER\)/,
    ],
    [
      'payload changed after signing',
      ({ keys, runnerId }) => {
        const [h, , s] = signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId }).split('.');
        const iat = nowSeconds() + 1;
        return `${h}.${b64({ orgId: emu.orgId, runnerId, iat, exp: iat + 60 })}.${s}`;
      },
      /signature does not verify/,
    ],
    [
      'empty signature',
      ({ keys, runnerId }) => `${rawJwt(keys, good, claims(runnerId)).split('.').slice(0, 2).join('.')}.`,
      /signature is not base64url/,
    ],
    [
      'wrong org',
      ({ keys, runnerId }) => signRunnerJwt(keys.privateKey, { orgId: emu.orgId + 1, runnerId }),
      /orgId \d+ is not the org of runner/,
    ],
  ];

  it.each(cases)('%s', async (_name, make, reason) => {
    const runner = await enrollRunner();
    const answer = await healthCheck(make(runner));
    expect(answer.status).toBe(401);
    expect(answer.detail).toMatch(reason);
    expect(emu.requests.at(-1)!.detail).toMatch(reason);
  });

  it('rejects a revoked runner, and accepted it before the revocation', async () => {
    const { runnerId, keys } = await enrollRunner();
    const jwt = signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId });
    expect((await healthCheck(jwt)).status).toBe(200);
    emu.revoke(runnerId);
    expect(emu.runners[0]!.revoked).toBe(true);
    const answer = await healthCheck(jwt);
    expect(answer.status).toBe(401);
    expect(answer.detail).toMatch(/has been revoked/);
  });

  it('throws when revoking an unknown runner', () => {
    expect(() => emu.revoke('nope')).toThrow(/no enrolled runner/);
  });

  it('judges the JWT before the other headers', async () => {
    const answer = await healthCheck('a.b.c', (h) => delete h['X-Datadog-OnPrem-Platform']);
    expect(answer.status).toBe(401);
  });
});

describe('clock skew boundaries (fixed clock)', () => {
  const fixedMs = 1_750_000_000_000;
  const now = fixedMs / 1000;
  let clocked: EnrollmentEmulator;
  let runner: { runnerId: string; keys: RunnerKeyPair };
  beforeAll(async () => {
    clocked = await startEnrollmentEmulator({ now: () => fixedMs, maxClockSkewSeconds: 10 });
    runner = await enrollRunner(clocked);
  });
  afterAll(() => clocked.close());

  const check = async (iat: number) =>
    (await healthCheck(signRunnerJwt(runner.keys.privateKey, { orgId: clocked.orgId, runnerId: runner.runnerId, iat }), () => {}, clocked))
      .status;

  it('accepts iat up to the skew ahead of the clock, not one second more', async () => {
    expect(await check(now + 10)).toBe(200);
    expect(await check(now + 11)).toBe(401);
  });

  it('accepts exp up to the skew behind the clock, not one second more', async () => {
    expect(await check(now - 70)).toBe(200); // exp = now - 10
    expect(await check(now - 71)).toBe(401); // exp = now - 11
  });
});

describe('other runtime headers and query parameters (400)', () => {
  const cases: [string, (h: Record<string, string>, q: URLSearchParams) => void, RegExp][] = [
    ['X-Datadog-OnPrem-Version missing', (h) => delete h['X-Datadog-OnPrem-Version'], /header X-Datadog-OnPrem-Version missing/],
    ['X-Datadog-OnPrem-Modes missing', (h) => delete h['X-Datadog-OnPrem-Modes'], /header X-Datadog-OnPrem-Modes missing/],
    [
      'X-Datadog-OnPrem-Modes push',
      (h) => {
        h['X-Datadog-OnPrem-Modes'] = 'push';
      },
      /X-Datadog-OnPrem-Modes must be "pull"/,
    ],
    ['X-Datadog-OnPrem-Platform missing', (h) => delete h['X-Datadog-OnPrem-Platform'], /header X-Datadog-OnPrem-Platform missing/],
    ['X-Datadog-OnPrem-Architecture missing', (h) => delete h['X-Datadog-OnPrem-Architecture'], /X-Datadog-OnPrem-Architecture missing/],
    ['X-Datadog-OnPrem-Flavor missing', (h) => delete h['X-Datadog-OnPrem-Flavor'], /X-Datadog-OnPrem-Flavor missing/],
    ['X-Datadog-OnPrem-Containerized missing', (h) => delete h['X-Datadog-OnPrem-Containerized'], /X-Datadog-OnPrem-Containerized missing/],
    [
      'X-Datadog-OnPrem-Containerized yes',
      (h) => {
        h['X-Datadog-OnPrem-Containerized'] = 'yes';
      },
      /must be "true" or "false"/,
    ],
    ['query runnerVersion missing', (_, q) => q.delete('runnerVersion'), /query parameter runnerVersion missing/],
    ['query modes push', (_, q) => q.set('modes', 'push'), /query parameter modes must be "pull"/],
    ['query platform missing', (_, q) => q.delete('platform'), /query parameter platform missing/],
    ['query architecture missing', (_, q) => q.delete('architecture'), /query parameter architecture missing/],
    ['query flavor missing', (_, q) => q.delete('flavor'), /query parameter flavor missing/],
    ['query containerized missing', (_, q) => q.delete('containerized'), /query parameter containerized missing/],
    [
      'header and query disagree',
      (_, q) => q.set('platform', 'windows'),
      /X-Datadog-OnPrem-Platform \("linux"\) differs from query parameter platform \("windows"\)/,
    ],
  ];

  it.each(cases)('%s', async (_name, change, reason) => {
    const { runnerId, keys } = await enrollRunner();
    const answer = await healthCheck(signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId }), change);
    expect(answer.status).toBe(400);
    expect(answer.detail).toMatch(reason);
  });

  it('answers 405 to POST', async () => {
    const res = await request(`${emu.url}${ROUTE_PATHS.health}`, { method: 'POST', body: '' });
    await res.body.dump();
    expect(res.statusCode).toBe(405);
    expect(res.headers['allow']).toBe('GET');
  });
});
