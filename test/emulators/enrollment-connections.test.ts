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
let runner: { runnerId: string; name: string };

beforeAll(async () => {
  emu = await startEnrollmentEmulator();
});
afterAll(() => emu.close());
beforeEach(async () => {
  emu.reset({ runners: true });
  const res = await fetch(`${emu.url}${ROUTE_PATHS.enroll}`, {
    method: 'POST',
    headers: enrollmentHeaders('enroll'),
    body: JSON.stringify(enrollmentBody({ publicKeyPem: newRunnerKeyPair().publicKeyPem })),
  });
  expect(res.status).toBe(200);
  runner = { runnerId: emu.runners[0]!.runnerId, name: emu.runners[0]!.name };
});

const headers = (over: Record<string, string> = {}) => ({
  'DD-API-KEY': DEFAULT_API_KEY,
  'DD-APPLICATION-KEY': DEFAULT_APP_KEY,
  'Content-Type': 'application/vnd.api+json',
  ...over,
});

function body(attrs: Record<string, unknown> = {}, data: Record<string, unknown> = {}) {
  return JSON.stringify({
    data: {
      type: 'action_connection',
      attributes: {
        name: `Kubernetes (${runner.name})`,
        runner_id: runner.runnerId,
        tags: [`runner-id:${runner.runnerId}`, 'hostname:h'],
        integration: { type: 'Kubernetes', credentials: { type: 'KubernetesServiceAccount' } },
        ...attrs,
      },
      ...data,
    },
  });
}

async function post(b: string, h: Record<string, string> = headers()) {
  const res = await fetch(`${emu.url}${ROUTE_PATHS.connections}`, { method: 'POST', headers: h, body: b });
  const json = (await res.json()) as { errors?: ({ detail: string } | string)[] };
  return { status: res.status, details: (json.errors ?? []).map((e) => (typeof e === 'string' ? e : e.detail)) };
}

describe('enrollment emulator: POST /api/v2/actions/connections', () => {
  it('creates a Kubernetes and a Script connection the way the agent sends them', async () => {
    expect((await post(body())).status).toBe(201);
    const script = body({
      name: `Script (${runner.name})`,
      integration: {
        type: 'Script',
        credentials: { configFileLocation: '/etc/datadog-agent/private-action-runner/script-config.yaml', type: 'Script' },
      },
    });
    expect((await post(script)).status).toBe(201);
    expect(emu.connections.map((c) => c.integrationType)).toEqual(['Kubernetes', 'Script']);
  });

  it('401 without keys, 403 with an app key lacking the scope', async () => {
    expect((await post(body(), headers({ 'DD-API-KEY': 'nope' }))).status).toBe(401);
    expect((await post(body(), { 'DD-API-KEY': DEFAULT_API_KEY, 'Content-Type': 'application/vnd.api+json' })).status).toBe(401);
    expect((await post(body(), headers({ 'DD-APPLICATION-KEY': DEFAULT_FORBIDDEN_APP_KEY }))).status).toBe(403);
  });

  it.each<[string, () => string, RegExp]>([
    ['a wrong data.type', () => body({}, { type: 'connection' }), /data.type must be "action_connection"/],
    ['an id (not client mode)', () => body({}, { id: 'x' }), /data.id must be absent/],
    ['a name not built from the runner name', () => body({ name: 'Kubernetes (other)' }), /name must be "Kubernetes \(/],
    ['an unknown runner', () => body({ runner_id: 'nope', tags: ['runner-id:nope'] }), /is not an enrolled runner/],
    ['an extra attribute', () => body({ extra: 1 }), /attributes must be exactly name, runner_id, tags, integration/],
    ['tags without runner-id', () => body({ tags: ['hostname:h'] }), /tags must include runner-id/],
    [
      'Kubernetes credentials with more fields',
      () => body({ integration: { type: 'Kubernetes', credentials: { type: 'KubernetesServiceAccount', token: 'x' } } }),
      /exactly \{"type":"KubernetesServiceAccount"\}/,
    ],
    [
      'a relative Script config path',
      () =>
        body({
          name: `Script (${runner.name})`,
          integration: { type: 'Script', credentials: { configFileLocation: 'script-config.yaml', type: 'Script' } },
        }),
      /absolute path/,
    ],
    [
      'an unknown integration type',
      () => body({ integration: { type: 'HTTP', credentials: {} } }),
      /integration.type must be "Kubernetes" or "Script"/,
    ],
  ])('rejects %s with 400', async (_name, make, detail) => {
    const res = await post(make());
    expect(res.status).toBe(400);
    expect(res.details.join('\n')).toMatch(detail);
    expect(emu.connections).toEqual([]);
  });

  it('rejects a wrong Content-Type', async () => {
    const res = await post(body(), headers({ 'Content-Type': 'application/json' }));
    expect(res.status).toBe(400);
    expect(res.details[0]).toMatch(/Content-Type must be application\/vnd.api\+json/);
  });
});

describe('enrollment emulator: X-Datadog-OnPrem-Version is strict', () => {
  it.each(['7.66.0', '7.66.0+commit.abc1234', '7.66.0-rc.1+git.12.commit.def', '0.1.0'])('accepts %s', async (version) => {
    const res = await fetch(`${emu.url}${ROUTE_PATHS.enroll}`, {
      method: 'POST',
      headers: { ...enrollmentHeaders('enroll'), 'X-Datadog-OnPrem-Version': version },
      body: JSON.stringify(enrollmentBody({ publicKeyPem: newRunnerKeyPair().publicKeyPem })),
    });
    expect(res.status).toBe(200);
  });

  it.each(['v7.66.0', '7.66', 'par-identity 0.1.0', '7.66.0 (linux)'])('refuses %s', async (version) => {
    const res = await fetch(`${emu.url}${ROUTE_PATHS.enroll}`, {
      method: 'POST',
      headers: { ...enrollmentHeaders('enroll'), 'X-Datadog-OnPrem-Version': version },
      body: JSON.stringify(enrollmentBody({ publicKeyPem: newRunnerKeyPair().publicKeyPem })),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('X-Datadog-OnPrem-Version must be an agent version');
  });
});
