import { describe, expect, it } from 'vitest';
import { buildEnrollmentRequest, type EnrollmentInput, enrollmentPath, runnerNameSuffix } from '../../src/enrollment/enrollment-request.js';
import { KNOWN_KEYS } from '../fixtures/known-keys.js';

const PEM = KNOWN_KEYS[0]!.pem;
const NOW = new Date('2025-03-04T05:06:07.890Z');

function input(patch: Partial<EnrollmentInput> = {}): EnrollmentInput {
  return {
    baseUrl: 'https://api.datadoghq.eu',
    apiKey: 'api-key-value',
    appKey: 'app-key-value',
    apiKeyOnly: false,
    flavor: 'private_action_runner',
    runnerNamePrefix: 'web-1',
    hostname: 'web-1',
    publicKeyPem: PEM,
    version: '0.1.0',
    extraHeaders: {},
    now: NOW,
    ...patch,
  };
}

describe('runnerNameSuffix: UTC YYYYMMDDHHMMSS', () => {
  it.each([
    ['2025-03-04T05:06:07.890Z', '20250304050607'],
    ['1999-12-31T23:59:59.999Z', '19991231235959'],
    ['2030-01-01T00:00:00.000Z', '20300101000000'],
    // A local-time offset in the input does not leak into the name.
    ['2025-03-04T01:06:07-04:00', '20250304050607'],
  ])('%s → %s', (iso, suffix) => {
    expect(runnerNameSuffix(new Date(iso))).toBe(suffix);
  });
});

describe('URL (docs/protocol.md §3)', () => {
  it('owned enrollment: POST {base}/api/unstable/on_prem_runners', () => {
    expect(enrollmentPath(false)).toBe('/api/unstable/on_prem_runners');
    expect(buildEnrollmentRequest(input()).url).toBe('https://api.datadoghq.eu/api/unstable/on_prem_runners');
  });

  it('API-key-only enrollment: POST {base}/api/unstable/on_prem_runners/api_key_only', () => {
    expect(enrollmentPath(true)).toBe('/api/unstable/on_prem_runners/api_key_only');
    expect(buildEnrollmentRequest(input({ apiKeyOnly: true, baseUrl: 'http://127.0.0.1:8123' })).url).toBe(
      'http://127.0.0.1:8123/api/unstable/on_prem_runners/api_key_only',
    );
  });
});

describe('headers (docs/protocol.md §3)', () => {
  it('owned enrollment sends both keys, the version, and no JWT', () => {
    expect(buildEnrollmentRequest(input()).headers).toEqual({
      'Content-Type': 'application/vnd.api+json',
      Accept: 'application/json',
      'DD-API-KEY': 'api-key-value',
      'DD-APPLICATION-KEY': 'app-key-value',
      'X-Datadog-OnPrem-Version': '0.1.0',
    });
  });

  it('API-key-only enrollment never sends the application key, even when one is known', () => {
    expect(buildEnrollmentRequest(input({ apiKeyOnly: true })).headers).toEqual({
      'Content-Type': 'application/vnd.api+json',
      Accept: 'application/json',
      'DD-API-KEY': 'api-key-value',
      'X-Datadog-OnPrem-Version': '0.1.0',
    });
  });

  it('owned enrollment without an application key sends no DD-APPLICATION-KEY', () => {
    const { appKey: _drop, ...rest } = input();
    expect(buildEnrollmentRequest(rest).headers).not.toHaveProperty('DD-APPLICATION-KEY');
  });

  it('extra headers are added and may override the defaults', () => {
    const headers = buildEnrollmentRequest(
      input({ extraHeaders: { 'X-Proxy-Auth': 'tok', 'X-Datadog-OnPrem-Version': '7.81.0', Accept: '*/*' } }),
    ).headers;
    expect(headers).toEqual({
      'Content-Type': 'application/vnd.api+json',
      Accept: '*/*',
      'DD-API-KEY': 'api-key-value',
      'DD-APPLICATION-KEY': 'app-key-value',
      'X-Datadog-OnPrem-Version': '7.81.0',
      'X-Proxy-Auth': 'tok',
    });
  });

  it('an extra header overrides a default whatever its case: one header per name, never two', () => {
    // HTTP header names are case-insensitive and the Go agent lower-cases config map keys.
    const headers = buildEnrollmentRequest(
      input({ extraHeaders: { 'x-datadog-onprem-version': '7.81.0', 'content-type': 'application/json' } }),
    ).headers;
    expect(headers).toEqual({
      'content-type': 'application/json',
      Accept: 'application/json',
      'DD-API-KEY': 'api-key-value',
      'DD-APPLICATION-KEY': 'app-key-value',
      'x-datadog-onprem-version': '7.81.0',
    });
  });
});

describe('body (JSON:API client mode, exact bytes)', () => {
  it('standalone runner: agent_hostname set, no orch_cluster_id, flavor private_action_runner', () => {
    const { body } = buildEnrollmentRequest(input({ clusterId: 'ignored-cluster' }));
    expect(body).toBe(
      `{"data":{"type":"createRunnerRequest","attributes":{"runner_name":"web-1-20250304050607","runner_modes":["pull"],"runner_host":"","public_key_pem":${JSON.stringify(PEM)},"agent_hostname":"web-1","agent_flavor":"private_action_runner"}}}`,
    );
    expect(JSON.parse(body).data.attributes.public_key_pem).toBe(PEM);
    expect(JSON.parse(body).data).not.toHaveProperty('id');
  });

  it('cluster agent: orch_cluster_id set, no agent_hostname, flavor cluster_agent, prefix = cluster name', () => {
    const { body } = buildEnrollmentRequest(
      input({
        flavor: 'cluster_agent',
        runnerNamePrefix: 'prod-eu',
        hostname: 'dca-pod-1',
        clusterId: '8f2c7a7e-1111-4c4c-9c9c-000000000001',
      }),
    );
    expect(body).toBe(
      `{"data":{"type":"createRunnerRequest","attributes":{"runner_name":"prod-eu-20250304050607","runner_modes":["pull"],"runner_host":"","public_key_pem":${JSON.stringify(PEM)},"orch_cluster_id":"8f2c7a7e-1111-4c4c-9c9c-000000000001","agent_flavor":"cluster_agent"}}}`,
    );
  });

  it('the body does not depend on api_key_only or the keys', () => {
    expect(buildEnrollmentRequest(input({ apiKeyOnly: true, apiKey: 'other' })).body).toBe(buildEnrollmentRequest(input()).body);
  });

  it('the body never carries a key', () => {
    const { body } = buildEnrollmentRequest(input());
    expect(body).not.toContain('api-key-value');
    expect(body).not.toContain('app-key-value');
  });
});
