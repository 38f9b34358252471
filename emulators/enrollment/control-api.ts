/**
 * HTTP control API under /__emulator/ on the main listener, so an emulator running as its own
 * process (`par-identity emulator`) can be inspected and scripted from shell demos with curl.
 * Its own requests are not logged: they would pollute the log the demo asserts on.
 */
import { maskSecret } from '../../src/credentials/index.js';
import type { FaultStep } from './fault-script.js';
import { parseScriptRequest } from './fault-script.js';
import type { Reply } from './reply.js';
import type { RecordedRequest } from './request-log.js';
import type { Route } from './routes.js';
import type { EnrolledRunner } from './runner-registry.js';

export const CONTROL_PREFIX = '/__emulator/';

export interface ControllableEmulator {
  url: string;
  otherHostUrl: string;
  orgId: number;
  requests: RecordedRequest[];
  runners: EnrolledRunner[];
  script(route: Route, ...steps: FaultStep[]): void;
  pendingFaults(route: Route): number;
  revoke(runnerId: string): void;
  reset(opts?: { runners?: boolean }): void;
}

/**
 * Headers whose values are credentials: shown over HTTP as the product shows keys (last four
 * characters). The runner's signed JWT proves its identity to whoever accepts it until it expires.
 */
const SECRET_HEADERS = new Set(['dd-api-key', 'dd-application-key', 'x-datadog-onprem-jwt']);
const mask = (value: string) => value.split(', ').map(maskSecret).join(', ');

/**
 * The log as served to anyone who can reach the port (any local user): the keys masked. The
 * in-process log stays verbatim, since the emulator checks credentials from it and tests assert on it.
 */
function redacted(entry: RecordedRequest): RecordedRequest {
  const headers = Object.fromEntries(
    Object.entries(entry.headers).map(([name, value]) => [name, SECRET_HEADERS.has(name) ? mask(value) : value]),
  );
  const rawHeaders = entry.rawHeaders.map(([name, value]): [string, string] => [
    name,
    SECRET_HEADERS.has(name.toLowerCase()) ? maskSecret(value) : value,
  ]);
  return { ...entry, headers, rawHeaders };
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return {};
  return JSON.parse(body.toString('utf8'));
}

function badRequest(message: string): Reply {
  return { status: 400, body: { error: message }, detail: message };
}

export function handleControl(method: string, path: string, body: Buffer, emu: ControllableEmulator): Reply {
  const name = path.slice(CONTROL_PREFIX.length);
  const allow = (expected: string): Reply | undefined =>
    method === expected ? undefined : { status: 405, body: { error: `use ${expected} for ${path}` }, headers: { Allow: expected } };

  let input: unknown;
  if (method === 'POST') {
    try {
      input = parseJson(body);
    } catch (err) {
      return badRequest(`body is not valid JSON: ${(err as Error).message}`);
    }
  }

  switch (name) {
    case 'info':
      return (
        allow('GET') ?? {
          status: 200,
          body: {
            url: emu.url,
            otherHostUrl: emu.otherHostUrl,
            orgId: emu.orgId,
            pendingFaults: {
              enroll: emu.pendingFaults('enroll'),
              enroll_api_key_only: emu.pendingFaults('enroll_api_key_only'),
              health: emu.pendingFaults('health'),
            },
          },
        }
      );
    case 'requests':
      return allow('GET') ?? { status: 200, body: emu.requests.map(redacted) };
    case 'runners':
      return allow('GET') ?? { status: 200, body: emu.runners };
    case 'script': {
      const wrong = allow('POST');
      if (wrong) return wrong;
      try {
        const { route, steps } = parseScriptRequest(input);
        emu.script(route, ...steps);
        return { status: 200, body: { route, queued: steps.length, pending: emu.pendingFaults(route) } };
      } catch (err) {
        return badRequest((err as Error).message);
      }
    }
    case 'revoke': {
      const wrong = allow('POST');
      if (wrong) return wrong;
      const runnerId = (input as { runnerId?: unknown } | null)?.runnerId;
      if (typeof runnerId !== 'string') return badRequest('expected {"runnerId": "<id>"}');
      try {
        emu.revoke(runnerId);
      } catch (err) {
        return { status: 404, body: { error: (err as Error).message } };
      }
      return { status: 200, body: { revoked: runnerId } };
    }
    case 'reset': {
      const wrong = allow('POST');
      if (wrong) return wrong;
      const runners = (input as { runners?: unknown } | null)?.runners;
      if (runners !== undefined && typeof runners !== 'boolean') return badRequest('runners must be a boolean');
      emu.reset({ runners: runners === true });
      return { status: 200, body: { reset: true, runnersCleared: runners === true } };
    }
    default:
      return {
        status: 404,
        body: { error: `unknown control endpoint ${path}; try info, requests, runners, script, revoke, reset` },
      };
  }
}
