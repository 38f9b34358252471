/** POST /api/unstable/on_prem_runners[/api_key_only]: authenticate, validate, register (docs/protocol.md §3). */
import { randomUUID } from 'node:crypto';
import { checkCredentials } from './check-credentials.js';
import type { ResolvedEmulatorOptions } from './options.js';
import { jsonApiErrors, plainErrors, type Reply } from './reply.js';
import type { EnrollmentRoute, RunnerRegistry } from './runner-registry.js';
import { validateEnrollmentBody, validateEnrollmentHeaders } from './validate-request.js';

export function successBody(orgId: number, runnerId: string): unknown {
  return { data: { type: 'createRunnerResponse', id: runnerId, attributes: { org_id: orgId, runner_id: runnerId } } };
}

export function handleEnroll(
  route: EnrollmentRoute,
  headers: Record<string, string>,
  body: Buffer,
  opts: ResolvedEmulatorOptions,
  registry: RunnerRegistry,
): Reply {
  const auth = checkCredentials(headers, route, opts);
  if (!auth.ok) {
    return auth.status === 400
      ? jsonApiErrors(400, [{ header: 'DD-APPLICATION-KEY', detail: auth.reason }])
      : plainErrors(auth.status, auth.reason);
  }
  const headerErrors = validateEnrollmentHeaders(headers);
  const check = validateEnrollmentBody(body);
  if (headerErrors.length > 0 || !check.ok) {
    return jsonApiErrors(400, [...headerErrors, ...(check.ok ? [] : check.errors)]);
  }
  const e = check.enrollment;
  const runnerId = randomUUID();
  registry.add({
    runnerId,
    orgId: opts.orgId,
    name: e.name,
    flavor: e.flavor,
    hostname: e.hostname,
    clusterId: e.clusterId,
    runnerHost: e.runnerHost,
    modes: e.modes,
    publicKeyPem: e.publicKeyPem,
    publicKey: e.publicKey,
    publicKeyThumbprint: e.thumbprint,
    enrolledVia: route,
    enrolledAt: opts.now(),
  });
  return { status: 200, body: successBody(opts.orgId, runnerId), detail: `enrolled runner ${runnerId}` };
}
