/**
 * Requests exactly as the Go agent sends them (docs/protocol.md §3 and docs/protocol.md §7), built with node:crypto.
 * The emulator's tests start from these and break one thing at a time; end-to-end tests and
 * demos can use them to enroll or health-check without going through our CLI.
 */
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from './options.js';
import { ROUTE_PATHS } from './routes.js';

export interface RunnerKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** SPKI PEM, 64-column lines, trailing newline: what Go's pem.Encode writes. */
  publicKeyPem: string;
}

export function newRunnerKeyPair(): RunnerKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, publicKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }) as string };
}

interface EnrollmentBodyOptions {
  publicKeyPem: string;
  flavor?: 'private_action_runner' | 'cluster_agent';
  hostname?: string;
  clusterId?: string;
  runnerName?: string;
}

export function enrollmentBody(o: EnrollmentBodyOptions) {
  const flavor = o.flavor ?? 'private_action_runner';
  const hostname = o.hostname ?? 'runner-host-1';
  const prefix = flavor === 'cluster_agent' ? 'my-cluster' : hostname;
  return {
    data: {
      type: 'createRunnerRequest',
      attributes: {
        runner_name: o.runnerName ?? `${prefix}-20250101120000`,
        runner_modes: ['pull'],
        runner_host: '',
        public_key_pem: o.publicKeyPem,
        ...(flavor === 'private_action_runner'
          ? { agent_hostname: hostname }
          : { orch_cluster_id: o.clusterId ?? '5f0b6c3e-0000-4000-8000-00000000c1d0' }),
        agent_flavor: flavor,
      },
    },
  };
}

export function enrollmentHeaders(
  route: 'enroll' | 'enroll_api_key_only',
  keys: { apiKey?: string; appKey?: string } = {},
): Record<string, string> {
  return {
    'Content-Type': 'application/vnd.api+json',
    Accept: 'application/json',
    'DD-API-KEY': keys.apiKey ?? DEFAULT_API_KEY,
    ...(route === 'enroll' ? { 'DD-APPLICATION-KEY': keys.appKey ?? DEFAULT_APP_KEY } : {}),
    'X-Datadog-OnPrem-Version': '7.81.0',
  };
}

interface RunnerJwtInput {
  orgId: number;
  runnerId: string;
  /** Seconds; default now. */
  iat?: number;
  /** Seconds; default iat + 60. */
  exp?: number;
}

/** ES256 JWT with golang-jwt's header and a JOSE r||s signature, as upstream GeneratePARJWT makes it. */
export function signRunnerJwt(
  privateKey: KeyObject,
  claims: RunnerJwtInput,
  header: Record<string, unknown> = { alg: 'ES256', cty: 'JWT', typ: 'JWT' },
  extraClaims: Record<string, unknown> = {},
): string {
  const iat = claims.iat ?? Math.floor(Date.now() / 1000);
  const payload = { orgId: claims.orgId, runnerId: claims.runnerId, iat, exp: claims.exp ?? iat + 60, ...extraClaims };
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${enc(header)}.${enc(payload)}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** The query of a health check (what the runner says about itself), not where it is sent. */
interface HealthCheckTarget {
  /** Version, platform, etc. as the Go client fills them. */
  runnerVersion?: string;
  platform?: string;
  architecture?: string;
  flavor?: string;
  containerized?: 'true' | 'false';
}

export function healthCheckRequest(jwt: string, t: HealthCheckTarget = {}): { path: string; headers: Record<string, string> } {
  const v = {
    runnerVersion: t.runnerVersion ?? '7.81.0',
    modes: 'pull',
    platform: t.platform ?? 'linux',
    architecture: t.architecture ?? 'amd64',
    flavor: t.flavor ?? 'private_action_runner',
    containerized: t.containerized ?? 'false',
  };
  return {
    path: `${ROUTE_PATHS.health}?${new URLSearchParams(v).toString()}`,
    headers: {
      Accept: 'application/json',
      'Content-Type': 'application/json',
      'X-Datadog-OnPrem-JWT': jwt,
      'X-Datadog-OnPrem-Version': v.runnerVersion,
      'X-Datadog-OnPrem-Modes': v.modes,
      'X-Datadog-OnPrem-Platform': v.platform,
      'X-Datadog-OnPrem-Architecture': v.architecture,
      'X-Datadog-OnPrem-Flavor': v.flavor,
      'X-Datadog-OnPrem-Containerized': v.containerized,
    },
  };
}
