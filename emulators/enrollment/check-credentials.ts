/**
 * Enrollment credentials (docs/protocol.md §3). Datadog answers unknown keys with a bare 401 and keys
 * without the scope with 403; the CLI maps both to "credentials rejected", so the split matters.
 */
import type { ResolvedEmulatorOptions } from './options.js';

type CredentialVerdict = { ok: true } | { ok: false; status: 401 | 403; reason: string } | { ok: false; status: 400; reason: string };

export function checkCredentials(
  headers: Record<string, string>,
  route: 'enroll' | 'enroll_api_key_only',
  opts: ResolvedEmulatorOptions,
): CredentialVerdict {
  const apiKey = headers['dd-api-key'];
  if (apiKey === undefined || apiKey === '') return { ok: false, status: 401, reason: 'DD-API-KEY header missing' };
  if (!opts.apiKeys.includes(apiKey)) return { ok: false, status: 401, reason: 'DD-API-KEY is not a valid API key' };

  const appKey = headers['dd-application-key'];
  if (route === 'enroll_api_key_only') {
    // Upstream never sends it here; seeing one means the client mixed up the two enrollment modes.
    if (appKey !== undefined) {
      return {
        ok: false,
        status: 400,
        reason:
          'DD-APPLICATION-KEY must not be sent to /api/unstable/on_prem_runners/api_key_only ' +
          '(API-key-only enrollment uses the API key alone)',
      };
    }
    return { ok: true };
  }
  if (appKey === undefined || appKey === '') {
    return { ok: false, status: 401, reason: 'DD-APPLICATION-KEY header missing (owned enrollment needs one)' };
  }
  if (opts.forbiddenAppKeys.includes(appKey)) {
    return { ok: false, status: 403, reason: 'DD-APPLICATION-KEY lacks the scope to enroll runners' };
  }
  if (!opts.appKeys.includes(appKey)) {
    return { ok: false, status: 401, reason: 'DD-APPLICATION-KEY is not a valid application key' };
  }
  return { ok: true };
}
