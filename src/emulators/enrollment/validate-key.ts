/**
 * GET /api/v1/validate: Datadog's public API key check (docs/protocol.md §13), which `--dry-run` uses to
 * prove the key before anything is enrolled. A known key answers 200 {"valid":true}; anything else
 * answers 403 with the bare error form. The application key is not looked at, as upstream.
 */
import type { ResolvedEmulatorOptions } from './options.js';
import { plainErrors, type Reply } from './reply.js';

export function handleValidateKey(headers: Record<string, string>, opts: ResolvedEmulatorOptions): Reply {
  const apiKey = headers['dd-api-key'];
  if (apiKey === undefined || apiKey === '') return plainErrors(403, 'DD-API-KEY header missing');
  if (!opts.apiKeys.includes(apiKey)) return plainErrors(403, 'DD-API-KEY is not a valid API key');
  return { status: 200, body: { valid: true } };
}
