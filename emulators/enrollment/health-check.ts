/**
 * GET /api/v2/on-prem-management-service/runner/health-check (docs/protocol.md §7): the online proof
 * that the server accepts an identity. Authentication (the JWT) is judged before the rest of
 * the request, like the API-key check on enrollment, so a bad identity always reads as 401.
 */
import { verifyRunnerJwt } from './jwt-verify.js';
import type { ResolvedEmulatorOptions } from './options.js';
import { jsonApiErrors, type Reply } from './reply.js';
import type { RunnerRegistry } from './runner-registry.js';
import type { ValidationError } from './validate-request.js';

/** Query parameter and the header that carries the same value in the upstream client. */
const PAIRS: readonly (readonly [query: string, header: string])[] = [
  ['runnerVersion', 'X-Datadog-OnPrem-Version'],
  ['modes', 'X-Datadog-OnPrem-Modes'],
  ['platform', 'X-Datadog-OnPrem-Platform'],
  ['architecture', 'X-Datadog-OnPrem-Architecture'],
  ['flavor', 'X-Datadog-OnPrem-Flavor'],
  ['containerized', 'X-Datadog-OnPrem-Containerized'],
];

function checkValue(name: string, value: string | null | undefined): string | undefined {
  if (value === undefined || value === null || value.trim() === '') return `${name} missing or empty`;
  if (/modes$/i.test(name) && value !== 'pull') return `${name} must be "pull", got ${JSON.stringify(value)}`;
  if (/containerized$/i.test(name) && value !== 'true' && value !== 'false') {
    return `${name} must be "true" or "false", got ${JSON.stringify(value)}`;
  }
  return undefined;
}

function validateHealthRequest(headers: Record<string, string>, query: URLSearchParams): ValidationError[] {
  const errors: ValidationError[] = [];
  for (const [param, header] of PAIRS) {
    const q = query.get(param);
    const h = headers[header.toLowerCase()];
    const qError = checkValue(`query parameter ${param}`, q);
    const hError = checkValue(`header ${header}`, h);
    if (qError) errors.push({ detail: qError });
    if (hError) errors.push({ header, detail: hError });
    // Upstream fills both from the same variable; a mismatch means two code paths disagree.
    if (!qError && !hError && q !== h) {
      errors.push({
        header,
        detail: `header ${header} (${JSON.stringify(h)}) differs from query parameter ${param} (${JSON.stringify(q)})`,
      });
    }
  }
  return errors;
}

/** RFC 3339 without fractions, which is what the Go client parses from X-Server-Time. */
function serverTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function handleHealthCheck(
  headers: Record<string, string>,
  query: URLSearchParams,
  opts: ResolvedEmulatorOptions,
  registry: RunnerRegistry,
): Reply {
  const nowMs = opts.now();
  const verdict = verifyRunnerJwt(headers['x-datadog-onprem-jwt'], {
    orgId: opts.orgId,
    maxClockSkewSeconds: opts.maxClockSkewSeconds,
    nowMs,
    findRunner: (id) => registry.find(id),
  });
  if (!verdict.ok) return jsonApiErrors(401, [{ header: 'X-Datadog-OnPrem-JWT', detail: verdict.reason }]);
  const errors = validateHealthRequest(headers, query);
  if (errors.length > 0) return jsonApiErrors(400, errors);
  return {
    status: 200,
    body: { status: 'ok' },
    headers: { 'X-Server-Time': serverTime(nowMs) },
    detail: `runner ${verdict.claims.runnerId} healthy`,
  };
}
