import { EnrollmentError, ParError } from '../errors.js';
import type { NetworkSettings } from '../config/network-settings.js';
import { describeNetworkError, exchange } from './http-exchange.js';
import { TLS_HINT, tlsCertificateErrorCode } from './tls-errors.js';

// Datadog's public API key check (docs/protocol.md §13): `GET {base}/api/v1/validate` with DD-API-KEY answers
// 200 {"valid":true} or 403. A dry run uses it to prove, without enrolling anything, that the key is
// accepted and that the API host is reachable with verified TLS.

const VALIDATE_PATH = '/api/v1/validate';

interface KeyValidation {
  /** A transient answer (5xx, 429): the real run would retry it, so it is reported, not fatal. */
  transient?: string;
}

export async function validateApiKey(baseUrl: string, apiKey: string, extraHeaders: Record<string, string>, timeoutMs: number, network?: NetworkSettings): Promise<KeyValidation> {
  const url = `${baseUrl}${VALIDATE_PATH}`;
  let res: Awaited<ReturnType<typeof exchange>>;
  try {
    res = await exchange('GET', url, { ...extraHeaders, Accept: 'application/json', 'DD-API-KEY': apiKey }, undefined, timeoutMs, network);
  } catch (err) {
    if (err instanceof ParError) throw err;
    const tls = tlsCertificateErrorCode(err);
    if (tls) throw new EnrollmentError('TLS_UNTRUSTED', `TLS certificate of ${new URL(url).host} not trusted (${tls})`, `Nothing was enrolled and nothing was changed. ${TLS_HINT}`, { tlsError: tls });
    throw new EnrollmentError(
      'API_UNREACHABLE',
      `the Datadog API at ${baseUrl} cannot be reached (${describeNetworkError(err)})`,
      'Nothing was enrolled and nothing was changed. Check site/dd_url, DNS, the proxy settings and TLS trust (NODE_EXTRA_CA_CERTS), then run again.',
      { endpoint: url },
    );
  }
  if (res.status === 200) {
    let valid = false;
    try {
      valid = (JSON.parse(res.body) as { valid?: unknown }).valid === true;
    } catch {
      valid = false;
    }
    if (valid) return {};
  }
  if (res.status === 200 || res.status === 401 || res.status === 403) {
    throw new ParError(
      'API_KEY_INVALID',
      `the Datadog API does not accept the API key (HTTP ${res.status} from ${url})`,
      'Nothing was enrolled and nothing was changed. Check the API key (and that it belongs to the site the config names), then run again.',
      { status: res.status, endpoint: url },
    );
  }
  if (res.status === 429 || res.status >= 500) return { transient: `HTTP ${res.status} (a real run retries this within --timeout)` };
  throw new EnrollmentError('API_KEY_CHECK_FAILED', `the API key check at ${url} answered HTTP ${res.status}`, 'Nothing was enrolled and nothing was changed. Check site/dd_url and any proxy in between.', { status: res.status, endpoint: url });
}
