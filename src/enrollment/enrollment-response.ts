import { EnrollmentError } from '../errors.js';
import { quotedServerValue, sanitizeServerString } from '../sanitize.js';
import { checkRunnerId } from '../identity/urn.js';

export interface EnrollmentResult {
  orgId: number;
  runnerId: string;
}

const NOTHING_CHANGED =
  'Nothing was written. Run again later; if it persists, check for a proxy rewriting responses or contact Datadog support.';

function bad(message: string): EnrollmentError {
  return new EnrollmentError('ENROLL_BAD_RESPONSE', `the enrollment API answered 200 but ${message}`, NOTHING_CHANGED);
}

/** Validates a 200 body: JSON:API createRunnerResponse with integer org_id and a URN-safe runner_id. */
export function parseEnrollmentResponse(body: string): EnrollmentResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw bad('the body is not valid JSON');
  }
  const data = (parsed as { data?: { type?: unknown; attributes?: Record<string, unknown> } } | null)?.data;
  if (!data || typeof data !== 'object') throw bad('the body has no data object');
  if (data.type !== 'createRunnerResponse') throw bad(`data.type is ${quotedServerValue(data.type)}, expected "createRunnerResponse"`);
  const attrs = data.attributes ?? {};
  const orgId = attrs.org_id;
  const runnerId = attrs.runner_id;
  if (typeof orgId !== 'number' || !Number.isSafeInteger(orgId)) throw bad('org_id is missing or not an integer');
  if (typeof runnerId !== 'string') throw bad('runner_id is missing or not a string');
  try {
    checkRunnerId(runnerId);
  } catch (err) {
    throw bad(`runner_id is unusable (${(err as Error).message})`);
  }
  return { orgId, runnerId };
}

/** The server's own words from a JSON:API or Datadog error body, shortened, for the operator. */
export function serverMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { errors?: unknown[] };
    const parts = (parsed.errors ?? []).map((e) =>
      typeof e === 'string'
        ? e
        : [((e as Record<string, unknown>).title as string) ?? '', ((e as Record<string, unknown>).detail as string) ?? '']
            .filter(Boolean)
            .join(': '),
    );
    const text = sanitizeServerString(parts.filter(Boolean).join('; '), 300);
    return text || undefined;
  } catch {
    const text = sanitizeServerString(body.trim(), 200);
    return text || undefined;
  }
}
