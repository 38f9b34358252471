import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_API_KEY,
  DEFAULT_APP_KEY,
  describeEmulator,
  type EnrolledRunner,
  type EnrollmentEmulator,
  type RecordedRequest,
  ROUTE_PATHS,
  startEnrollmentEmulator,
} from '../../emulators/enrollment/index.js';
import {
  enrollmentBody,
  enrollmentHeaders,
  healthCheckRequest,
  newRunnerKeyPair,
  signRunnerJwt,
} from '../../emulators/enrollment/known-good-requests.js';

let emu: EnrollmentEmulator;
const keys = newRunnerKeyPair();
const body = JSON.stringify(enrollmentBody({ publicKeyPem: keys.publicKeyPem }));

beforeAll(async () => {
  emu = await startEnrollmentEmulator();
});
afterAll(() => emu.close());
beforeEach(() => emu.reset({ runners: true }));

async function control(method: 'GET' | 'POST', name: string, payload?: unknown, base = emu.url) {
  const res = await request(`${base}/__emulator/${name}`, {
    method,
    ...(payload === undefined ? {} : { body: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, json, headers: res.headers };
}

async function enroll(path = `${ROUTE_PATHS.enroll}?trace=1&trace=2`) {
  const res = await request(`${emu.url}${path}`, {
    method: 'POST',
    headers: { ...enrollmentHeaders('enroll'), 'X-Mixed-Case': 'Value' },
    body,
  });
  return { status: res.statusCode, json: (await res.body.json()) as { data: { id: string } } };
}

describe('request log', () => {
  it('records method, path, query, headers (lower-cased and raw), body, time and status', async () => {
    const before = Date.now();
    await enroll();
    const r = emu.requests[0]!;
    expect(r).toMatchObject({
      seq: expect.any(Number),
      listener: 'main',
      method: 'POST',
      path: ROUTE_PATHS.enroll,
      query: { trace: '1' },
      rawQuery: 'trace=1&trace=2',
      body,
      bodyBytes: Buffer.byteLength(body),
      route: 'enroll',
      status: 200,
      fault: null,
    });
    expect(r.headers['dd-api-key']).toBe(DEFAULT_API_KEY);
    expect(r.headers['dd-application-key']).toBe(DEFAULT_APP_KEY);
    expect(r.headers['x-mixed-case']).toBe('Value');
    expect(r.rawHeaders).toContainEqual(['X-Mixed-Case', 'Value']);
    expect(r.rawHeaders).toContainEqual(['DD-API-KEY', DEFAULT_API_KEY]);
    expect(r.time).toBeGreaterThanOrEqual(before);
    expect(r.time).toBeLessThanOrEqual(Date.now());
  });

  it('keeps the log array identity across reset(), and numbers entries across resets', async () => {
    const log = emu.requests;
    await enroll();
    const firstSeq = log[0]!.seq;
    emu.reset();
    expect(log).toHaveLength(0);
    await enroll();
    expect(emu.requests).toBe(log);
    expect(log[0]!.seq).toBeGreaterThan(firstSeq);
  });

  it('records unknown paths with route null and 404', async () => {
    const res = await request(`${emu.url}/api/v1/not-emulated`);
    await res.body.dump();
    expect(res.statusCode).toBe(404);
    expect(emu.requests[0]).toMatchObject({ route: null, status: 404, path: '/api/v1/not-emulated' });
  });

  it('logs requests to the other listener as listener "other"', async () => {
    const res = await request(`${emu.otherHostUrl}${ROUTE_PATHS.enroll}`, {
      method: 'POST',
      headers: enrollmentHeaders('enroll'),
      body,
    });
    await res.body.dump();
    expect(emu.requests.map((r) => r.listener)).toEqual(['other']);
  });

  it('keeps runners across reset() unless asked', async () => {
    await enroll();
    emu.reset();
    expect(emu.runners).toHaveLength(1);
    emu.reset({ runners: true });
    expect(emu.runners).toHaveLength(0);
  });
});

describe('control API', () => {
  it('GET requests returns the log, without the control calls themselves, the keys masked as the product masks them', async () => {
    await enroll();
    await control('GET', 'info');
    const answer = await control('GET', 'requests');
    expect(answer.status).toBe(200);
    const log = answer.json as RecordedRequest[];
    expect(log).toHaveLength(1);
    expect(log[0]!.headers['dd-api-key']).toBe(`…${DEFAULT_API_KEY.slice(-4)}`);
    expect(log[0]!.headers['dd-application-key']).toBe(`…${DEFAULT_APP_KEY.slice(-4)}`);
    expect(log[0]!.rawHeaders).toContainEqual(['DD-API-KEY', `…${DEFAULT_API_KEY.slice(-4)}`]);
    expect(log[0]!.headers['x-mixed-case']).toBe('Value');
    for (const key of [DEFAULT_API_KEY, DEFAULT_APP_KEY]) expect(JSON.stringify(answer.json)).not.toContain(key);
    // The in-process log stays verbatim: the emulator checks credentials from it.
    expect(emu.requests[0]!.headers['dd-api-key']).toBe(DEFAULT_API_KEY);
  });

  it('GET runners returns the enrolled runners', async () => {
    const { json } = await enroll();
    const answer = await control('GET', 'runners');
    const runners = answer.json as EnrolledRunner[];
    expect(runners.map((r) => r.runnerId)).toEqual([json.data.id]);
    expect(runners[0]!.publicKeyPem).toBe(keys.publicKeyPem);
  });

  it('GET info describes the emulator', async () => {
    emu.script('health', { status: 500 });
    const answer = await control('GET', 'info');
    expect(answer.json).toEqual({
      url: emu.url,
      otherHostUrl: emu.otherHostUrl,
      orgId: emu.orgId,
      pendingFaults: { enroll: 0, enroll_api_key_only: 0, health: 1 },
    });
  });

  it('POST script queues steps that the next requests consume', async () => {
    const answer = await control('POST', 'script', { route: 'enroll', steps: [{ status: 503, retryAfter: '1' }, { status: 500 }] });
    expect(answer).toMatchObject({ status: 200, json: { route: 'enroll', queued: 2, pending: 2 } });
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(`${emu.url}${ROUTE_PATHS.enroll}`, { method: 'POST', headers: enrollmentHeaders('enroll'), body });
      await res.body.dump();
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([503, 500, 200]);
  });

  it.each([
    ['an unknown route', { route: 'not-a-route', steps: [] }, /route must be/],
    ['steps not an array', { route: 'enroll', steps: { status: 500 } }, /steps must be an array/],
    ['an invalid step', { route: 'enroll', steps: [{ status: 500 }, { bogus: true }] }, /fault step 1 .*unknown field "bogus"/],
    ['a body that is not JSON', '{route:', /not valid JSON/],
  ])('POST script answers 400 for %s and queues nothing', async (_name, payload, message) => {
    const answer = await control('POST', 'script', payload);
    expect(answer.status).toBe(400);
    expect((answer.json as { error: string }).error).toMatch(message);
    expect(emu.pendingFaults('enroll')).toBe(0);
  });

  it('POST revoke revokes a runner: its health check then fails', async () => {
    const { json } = await enroll();
    const runnerId = json.data.id;
    const { path, headers } = healthCheckRequest(signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId }));
    const before = await request(`${emu.url}${path}`, { headers });
    await before.body.dump();
    expect(before.statusCode).toBe(200);

    expect(await control('POST', 'revoke', { runnerId })).toMatchObject({ status: 200, json: { revoked: runnerId } });
    expect(emu.runners[0]!.revoked).toBe(true);
    const after = await request(`${emu.url}${path}`, { headers });
    await after.body.dump();
    expect(after.statusCode).toBe(401);
  });

  it('POST revoke answers 404 for an unknown runner and 400 without an id', async () => {
    expect((await control('POST', 'revoke', { runnerId: 'nope' })).status).toBe(404);
    expect((await control('POST', 'revoke', {})).status).toBe(400);
  });

  it('POST reset clears the log and scripts, and runners only when asked', async () => {
    await enroll();
    emu.script('enroll', { status: 500 });
    expect(await control('POST', 'reset')).toMatchObject({ status: 200, json: { runnersCleared: false } });
    expect(emu.requests).toHaveLength(0);
    expect(emu.pendingFaults('enroll')).toBe(0);
    expect(emu.runners).toHaveLength(1);
    expect(await control('POST', 'reset', { runners: true })).toMatchObject({ status: 200, json: { runnersCleared: true } });
    expect(emu.runners).toHaveLength(0);
  });

  it('answers 405 to the wrong method and 404 to an unknown endpoint', async () => {
    const wrong = await control('POST', 'requests', {});
    expect(wrong.status).toBe(405);
    expect(wrong.headers['allow']).toBe('GET');
    expect((await control('GET', 'script')).status).toBe(405);
    expect((await control('GET', 'nothing')).status).toBe(404);
  });

  it('exists only on the main listener', async () => {
    const answer = await control('GET', 'requests', undefined, emu.otherHostUrl);
    expect(answer.status).toBe(404);
    expect(emu.requests[0]).toMatchObject({ listener: 'other', path: '/__emulator/requests', status: 404 });
  });
});

describe('describeEmulator', () => {
  it('names the URLs, the fake test keys and the control API', () => {
    const text = describeEmulator(emu).join('\n');
    expect(text).toContain(emu.url);
    expect(text).toContain(emu.otherHostUrl);
    expect(text).toContain(DEFAULT_API_KEY);
    expect(text).toContain(DEFAULT_APP_KEY);
    expect(text).toContain(String(emu.orgId));
    expect(text).toContain('/__emulator/');
    expect(text).toContain('DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true');
  });

  it('never prints keys the caller configured', async () => {
    const custom = await startEnrollmentEmulator({ apiKeys: ['secret-api-key-value'], appKeys: ['secret-app-key-value'] });
    try {
      const text = describeEmulator(custom).join('\n');
      expect(text).not.toContain('secret-api-key-value');
      expect(text).not.toContain('secret-app-key-value');
      expect(text).toContain('1 custom key (not shown)');
    } finally {
      await custom.close();
    }
  });
});

describe('listeners', () => {
  it('binds the redirect target on another loopback address where the system has one', () => {
    const main = new URL(emu.url);
    const other = new URL(emu.otherHostUrl);
    expect(main.hostname).toBe('127.0.0.1');
    if (emu.otherHostIsDistinctAddress) expect(other.hostname).not.toBe(main.hostname);
    else expect(other.port).not.toBe(main.port);
  });

  it('listens on a requested port and closes idempotently', async () => {
    const probe = await startEnrollmentEmulator();
    const port = Number(new URL(probe.url).port);
    await probe.close();
    const fixed = await startEnrollmentEmulator({ port });
    expect(fixed.url).toBe(`http://127.0.0.1:${port}`);
    await Promise.all([fixed.close(), fixed.close()]);
    await expect(request(`${fixed.url}/__emulator/info`)).rejects.toThrow();
  });

  it('fails to start on a port already in use', async () => {
    const port = Number(new URL(emu.url).port);
    await expect(startEnrollmentEmulator({ port })).rejects.toThrow(/EADDRINUSE/);
  });
});
