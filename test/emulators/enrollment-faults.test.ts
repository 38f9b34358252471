import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_API_KEY, type EnrollmentEmulator, ROUTE_PATHS, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
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

function enrollRaw(
  base = emu.url,
  route: 'enroll' | 'enroll_api_key_only' = 'enroll',
  headers: Record<string, string> = enrollmentHeaders(route),
) {
  return request(`${base}${ROUTE_PATHS[route]}`, { method: 'POST', headers, body });
}

async function enroll(base = emu.url, route: 'enroll' | 'enroll_api_key_only' = 'enroll', headers?: Record<string, string>) {
  const res = await enrollRaw(base, route, headers);
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const pemSent = (i: number) =>
  (JSON.parse(emu.requests[i]!.body) as { data: { attributes: { public_key_pem: string } } }).data.attributes.public_key_pem;

describe('status sequences', () => {
  it('answers the scripted statuses in order, then behaves normally', async () => {
    emu.script('enroll', { status: 500 }, { status: 503 });
    expect(emu.pendingFaults('enroll')).toBe(2);
    const answers = [await enroll(), await enroll(), await enroll()];
    expect(answers.map((a) => a.status)).toEqual([500, 503, 200]);
    expect(JSON.parse(answers[0]!.text)).toEqual({ errors: ['Internal Server Error'] });
    expect(JSON.parse(answers[1]!.text)).toEqual({ errors: ['Service Unavailable'] });
    expect(emu.pendingFaults('enroll')).toBe(0);
    expect(emu.runners).toHaveLength(1);
    expect(emu.requests.map((r) => r.fault)).toEqual(['status 500', 'status 503', null]);
  });

  it('records each retry in full, so tests can see the same key was reused', async () => {
    emu.script('enroll', { status: 502 });
    await enroll();
    await enroll();
    expect(emu.requests).toHaveLength(2);
    expect(pemSent(0)).toBe(keys.publicKeyPem);
    expect(pemSent(1)).toBe(pemSent(0));
  });

  it('hands steps out in arrival order, even when an earlier body arrives later', async () => {
    emu.script('enroll', { status: 500 }, { status: 503 });
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    async function* slowBody() {
      yield Buffer.from(body.slice(0, 10));
      await gate;
      yield Buffer.from(body.slice(10));
    }
    const slow = request(`${emu.url}${ROUTE_PATHS.enroll}`, {
      method: 'POST',
      headers: { ...enrollmentHeaders('enroll'), 'Content-Length': String(Buffer.byteLength(body)) },
      body: Readable.from(slowBody()),
    });
    await vi.waitFor(() => expect(emu.requests).toHaveLength(1));
    const fast = await enroll();
    release();
    const slowRes = await slow;
    await slowRes.body.dump();
    expect([slowRes.statusCode, fast.status]).toEqual([500, 503]);
  });

  it('answers a faulted request without validating it', async () => {
    emu.script('enroll', { status: 500 });
    const res = await request(`${emu.url}${ROUTE_PATHS.enroll}`, { method: 'POST', body: 'junk' });
    await res.body.dump();
    expect(res.statusCode).toBe(500);
  });

  it('keeps each route its own queue, untouched by other paths', async () => {
    emu.script('enroll_api_key_only', { status: 500 });
    const stray = await request(`${emu.url}/api/unstable/elsewhere`, { method: 'POST', body: '{}' });
    await stray.body.dump();
    expect((await enroll()).status).toBe(200);
    expect((await enroll(emu.url, 'enroll_api_key_only')).status).toBe(500);
  });

  it('answers an odd 2xx with a success-shaped body but registers nothing', async () => {
    emu.script('enroll', { status: 201 }, { status: 204 });
    const created = await enroll();
    expect(created.status).toBe(201);
    expect(JSON.parse(created.text).data.type).toBe('createRunnerResponse');
    const empty = await enroll();
    expect(empty.status).toBe(204);
    expect(empty.text).toBe('');
    expect(emu.runners).toHaveLength(0);
  });

  it('sends a custom body and headers', async () => {
    emu.script('enroll', { status: 502, body: '<html>bad gateway</html>', headers: { 'Content-Type': 'text/html' } });
    const answer = await enroll();
    expect(answer).toMatchObject({ status: 502, text: '<html>bad gateway</html>' });
    expect(answer.headers['content-type']).toBe('text/html');
  });

  it('adds headers to a passThrough answer', async () => {
    emu.script('enroll', { passThrough: true, headers: { 'X-Emulator-Step': 'one' } });
    const answer = await enroll();
    expect(answer.status).toBe(200);
    expect(answer.headers['x-emulator-step']).toBe('one');
    expect(emu.runners).toHaveLength(1);
  });

  it('scripts the health check too', async () => {
    const enrolled = JSON.parse((await enroll()).text) as { data: { id: string } };
    emu.script('health', { status: 503, retryAfter: '1' });
    const { path, headers } = healthCheckRequest(signRunnerJwt(keys.privateKey, { orgId: emu.orgId, runnerId: enrolled.data.id }));
    const first = await request(`${emu.url}${path}`, { headers });
    await first.body.dump();
    const second = await request(`${emu.url}${path}`, { headers });
    await second.body.dump();
    expect([first.statusCode, second.statusCode]).toEqual([503, 200]);
    expect(first.headers['retry-after']).toBe('1');
  });
});

describe('Retry-After', () => {
  it('sends Retry-After in seconds with 429', async () => {
    emu.script('enroll', { status: 429, retryAfter: '2' });
    const answer = await enroll();
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('2');
  });

  it('sends Retry-After as an HTTP date with 503', async () => {
    const date = new Date(Date.now() + 3_000).toUTCString();
    emu.script('enroll', { status: 503, retryAfter: date });
    const answer = await enroll();
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe(date);
  });

  it('defaults to 429 when only retryAfter is given', async () => {
    emu.script('enroll', { retryAfter: '1' });
    expect((await enroll()).status).toBe(429);
  });
});

describe('delays', () => {
  it('delays a normal answer', async () => {
    emu.script('enroll', { delayMs: 250, passThrough: true });
    const started = performance.now();
    const answer = await enroll();
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
    expect(answer.status).toBe(200);
    expect(emu.runners).toHaveLength(1);
  });

  it('treats a step with only delayMs as passThrough', async () => {
    emu.script('enroll', { delayMs: 50 });
    expect((await enroll()).status).toBe(200);
    expect(emu.requests[0]!.fault).toBe('passThrough, delay 50ms');
  });

  it('delays a scripted error', async () => {
    emu.script('enroll', { delayMs: 200, status: 500 });
    const started = performance.now();
    expect((await enroll()).status).toBe(500);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('notices a client that gives up during the delay and registers nothing', async () => {
    emu.script('enroll', { delayMs: 5_000, passThrough: true });
    await expect(
      request(`${emu.url}${ROUTE_PATHS.enroll}`, {
        method: 'POST',
        headers: enrollmentHeaders('enroll'),
        body,
        signal: AbortSignal.timeout(100),
      }),
    ).rejects.toThrow();
    await vi.waitFor(() => expect(emu.requests[0]!.detail).toMatch(/closed during the scripted delay/));
    expect(emu.requests[0]!.status).toBeNull();
    expect(emu.runners).toHaveLength(0);
  });
});

describe('redirect to the other host', () => {
  it('answers 307 with Location on otherHostUrl, same path', async () => {
    emu.script('enroll', { redirectToOtherHost: true });
    const answer = await enroll();
    expect(answer.status).toBe(307);
    expect(answer.headers['location']).toBe(`${emu.otherHostUrl}${ROUTE_PATHS.enroll}`);
    const other = new URL(emu.otherHostUrl);
    const main = new URL(emu.url);
    if (emu.otherHostIsDistinctAddress) expect(other.hostname).not.toBe(main.hostname);
    else expect(other.port).not.toBe(main.port);
  });

  it('uses the scripted redirect status and keeps the query string', async () => {
    emu.script('health', { redirectToOtherHost: true, status: 302 });
    const res = await request(`${emu.url}${ROUTE_PATHS.health}?runnerVersion=1&modes=pull`);
    await res.body.dump();
    expect(res.statusCode).toBe(302);
    expect(res.headers['location']).toBe(`${emu.otherHostUrl}${ROUTE_PATHS.health}?runnerVersion=1&modes=pull`);
  });

  it('records on the other host what a careful client sent: no API key', async () => {
    emu.script('enroll', { redirectToOtherHost: true });
    const redirected = await enrollRaw();
    await redirected.body.dump();
    const { 'DD-API-KEY': _api, 'DD-APPLICATION-KEY': _app, ...safe } = enrollmentHeaders('enroll');
    const followed = await enroll(emu.otherHostUrl, 'enroll', safe);
    expect(followed.status).toBe(401); // the other host behaves like the real API
    const atOther = emu.requests.filter((r) => r.listener === 'other');
    expect(atOther).toHaveLength(1);
    expect(atOther[0]!.headers).not.toHaveProperty('dd-api-key');
    expect(atOther[0]!.body).toBe(body);
  });

  it('records the API key when a naive client carries it across (the assertion above can fail)', async () => {
    emu.script('enroll', { redirectToOtherHost: true });
    const redirected = await enrollRaw();
    await redirected.body.dump();
    const location = redirected.headers['location'] as string;
    const followed = await request(location, { method: 'POST', headers: enrollmentHeaders('enroll'), body });
    await followed.body.dump();
    const atOther = emu.requests.filter((r) => r.listener === 'other');
    expect(atOther[0]!.headers['dd-api-key']).toBe(DEFAULT_API_KEY);
    expect(followed.statusCode).toBe(200);
  });

  it('never scripts the other host', async () => {
    emu.script('enroll', { status: 500 });
    expect((await enroll(emu.otherHostUrl)).status).toBe(200);
    expect(emu.pendingFaults('enroll')).toBe(1);
  });
});

describe('broken response bodies', () => {
  it('streams an oversized body without Content-Length', async () => {
    const size = 5 * 1024 * 1024;
    emu.script('enroll', { oversizeBytes: size });
    const res = await enrollRaw();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['transfer-encoding']).toBe('chunked');
    let total = 0;
    let first = '';
    for await (const chunk of res.body) {
      if (total === 0) first = chunk.subarray(0, 8).toString();
      total += chunk.length;
    }
    expect(total).toBe(size);
    expect(first).toBe('{"data":');
  });

  it('survives a client that stops reading an oversized body', async () => {
    emu.script('enroll', { oversizeBytes: 64 * 1024 * 1024 });
    const res = await enrollRaw();
    let total = 0;
    for await (const chunk of res.body) {
      total += chunk.length;
      if (total > 256 * 1024) break;
    }
    expect((await enroll()).status).toBe(200);
  });

  it('answers 200 with invalid JSON', async () => {
    emu.script('enroll', { invalidJson: true });
    const answer = await enroll();
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(() => JSON.parse(answer.text)).toThrow();
    expect(emu.runners).toHaveLength(0);
  });

  it('answers 200 with the wrong data.type', async () => {
    emu.script('enroll', { wrongType: true });
    const answer = await enroll();
    expect(answer.status).toBe(200);
    const json = JSON.parse(answer.text) as { data: { type: string; attributes: { runner_id: string } } };
    expect(json.data.type).not.toBe('createRunnerResponse');
    expect(json.data.attributes.runner_id).not.toContain(':');
    expect(emu.runners).toHaveLength(0);
  });

  it('answers 200 with a runner_id containing ":"', async () => {
    emu.script('enroll', { runnerIdWithColon: true });
    const answer = await enroll();
    const json = JSON.parse(answer.text) as { data: { type: string; id: string; attributes: { runner_id: string } } };
    expect(answer.status).toBe(200);
    expect(json.data.type).toBe('createRunnerResponse');
    expect(json.data.attributes.runner_id).toContain(':');
    expect(emu.runners).toHaveLength(0);
  });

  it('drops the connection mid-response', async () => {
    emu.script('enroll', { dropConnection: true });
    const res = await enrollRaw();
    expect(res.statusCode).toBe(200);
    await expect(res.body.text()).rejects.toThrow();
    expect(emu.requests[0]).toMatchObject({ status: 200, fault: 'dropConnection' });
    expect((await enroll()).status).toBe(200);
  });
});

describe('script validation', () => {
  it.each([
    ['an unknown field', 'enroll', { stauts: 500 }, /unknown field "stauts"/],
    ['a status out of range', 'enroll', { status: 700 }, /status must be an integer 100\.\.599/],
    ['a negative delay', 'enroll', { delayMs: -1 }, /delayMs/],
    ['two body kinds', 'enroll', { invalidJson: true, oversizeBytes: 10 }, /cannot be combined/],
    ['passThrough with a status', 'enroll', { passThrough: true, status: 500 }, /passThrough cannot be combined/],
    ['a redirect with a non-redirect status', 'enroll', { redirectToOtherHost: true, status: 500 }, /3xx/],
    ['wrongType on the health route', 'health', { wrongType: true }, /only apply to enrollment routes/],
    ['a header with a newline', 'enroll', { headers: { 'X-A': 'a\r\nb' } }, /not a valid header/],
    ['a non-boolean flag', 'enroll', { dropConnection: 'yes' }, /dropConnection must be a boolean/],
  ] as const)('rejects %s and queues nothing', (_name, route, step, message) => {
    expect(() => emu.script(route, { status: 500 }, step as never)).toThrow(message);
    expect(emu.pendingFaults(route)).toBe(0);
  });

  it('appends to what is already queued', () => {
    emu.script('enroll', { status: 500 });
    emu.script('enroll', { status: 501 });
    expect(emu.pendingFaults('enroll')).toBe(2);
  });

  it('reset() clears the queues', async () => {
    emu.script('enroll', { status: 500 });
    emu.reset();
    expect(emu.pendingFaults('enroll')).toBe(0);
    expect((await enroll()).status).toBe(200);
  });
});

describe('close()', () => {
  it('ends a pending scripted delay instead of waiting for it', async () => {
    const short = await startEnrollmentEmulator();
    // The longest delay a script may ask for, 10 minutes: a close() that waited for it would outlast the test's timeout.
    short.script('enroll', { delayMs: 600_000, passThrough: true });
    const pending = enrollRaw(short.url);
    pending.catch(() => {});
    await vi.waitFor(() => expect(short.requests).toHaveLength(1));
    await short.close();
    // Cut, not answered: the request fails.
    await expect(pending).rejects.toThrow();
  });
});
