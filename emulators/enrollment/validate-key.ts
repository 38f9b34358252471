/**
 * Datadog's public key checks (docs/protocol.md §13), which `--dry-run` uses to prove the keys before
 * anything is enrolled. GET /api/v1/validate: a known API key answers 200 {"valid":true}, anything else
 * 403 with the bare error form; the application key is not looked at, as upstream. GET
 * /api/v2/validate_keys: 200 {"status":"ok"} when both keys are valid, else 403 (the bare form). A known
 * application key without the scope to enroll runners is still a valid key here: this check does not
 * know which call will follow, so only the enrollment refuses it.
 */
import type { ResolvedEmulatorOptions } from './options.js';
import { plainErrors, type Reply } from './reply.js';

export function handleValidateKey(headers: Record<string, string>, opts: ResolvedEmulatorOptions): Reply {
  const apiKey = headers['dd-api-key'];
  if (apiKey === undefined || apiKey === '') return plainErrors(403, 'DD-API-KEY header missing');
  if (!opts.apiKeys.includes(apiKey)) return plainErrors(403, 'DD-API-KEY is not a valid API key');
  return { status: 200, body: { valid: true } };
}

export function handleValidateKeys(headers: Record<string, string>, opts: ResolvedEmulatorOptions): Reply {
  const apiKey = headers['dd-api-key'];
  if (apiKey === undefined || apiKey === '') return plainErrors(403, 'DD-API-KEY header missing');
  if (!opts.apiKeys.includes(apiKey)) return plainErrors(403, 'DD-API-KEY is not a valid API key');
  const appKey = headers['dd-application-key'];
  if (appKey === undefined || appKey === '') return plainErrors(403, 'DD-APPLICATION-KEY header missing');
  if (!opts.appKeys.includes(appKey) && !opts.forbiddenAppKeys.includes(appKey))
    return plainErrors(403, 'DD-APPLICATION-KEY is not a valid application key');
  return { status: 200, body: { status: 'ok' } };
}
