import { EnrollmentError, ParError } from '../errors.js';
import type { NetworkSettings } from '../config/network-settings.js';
import { describeNetworkError, exchange } from './http-exchange.js';
import { TLS_HINT, tlsCertificateErrorCode } from './tls-errors.js';

// Datadog's public key checks (docs/protocol.md §13), which a dry run uses to prove, without enrolling
// anything, that the keys are accepted and that the API host is reachable with verified TLS:
// `GET {base}/api/v1/validate` (DD-API-KEY alone) answers 200 {"valid":true} or 403;
// `GET {base}/api/v2/validate_keys` (DD-API-KEY and DD-APPLICATION-KEY) answers 200 {"status":"ok"}
// when both are valid, 401/403 otherwise. Neither says whether the application key may enroll runners:
// only the enrollment itself checks that.

const VALIDATE_PATH = '/api/v1/validate';
const VALIDATE_KEYS_PATH = '/api/v2/validate_keys';

interface KeyValidation {
  /** Why the key is not proven, though not refused: a transient answer (5xx, 429) the real run would retry, or no such endpoint. */
  unproven?: string;
}

async function get(
  url: string,
  baseUrl: string,
  headers: Record<string, string>,
  timeoutMs: number,
  network?: NetworkSettings,
): Promise<Awaited<ReturnType<typeof exchange>>> {
  try {
    return await exchange('GET', url, { ...headers, Accept: 'application/json' }, undefined, timeoutMs, network);
  } catch (err) {
    if (err instanceof ParError) throw err;
    const tls = tlsCertificateErrorCode(err);
    if (tls)
      throw new EnrollmentError(
        'TLS_UNTRUSTED',
        `TLS certificate of ${new URL(url).host} not trusted (${tls})`,
        `Nothing was enrolled and nothing was changed. ${TLS_HINT}`,
        { tlsError: tls },
      );
    throw new EnrollmentError(
      'API_UNREACHABLE',
      `the Datadog API at ${baseUrl} cannot be reached (${describeNetworkError(err)})`,
      'Nothing was enrolled and nothing was changed. Check site/dd_url, DNS, the proxy settings and TLS trust (NODE_EXTRA_CA_CERTS), then run again.',
      { endpoint: url },
    );
  }
}

function jsonField(body: string, field: string): unknown {
  try {
    return (JSON.parse(body) as Record<string, unknown>)[field];
  } catch {
    return undefined;
  }
}

export async function validateApiKey(
  baseUrl: string,
  apiKey: string,
  extraHeaders: Record<string, string>,
  timeoutMs: number,
  network?: NetworkSettings,
): Promise<KeyValidation> {
  const url = `${baseUrl}${VALIDATE_PATH}`;
  const res = await get(url, baseUrl, { ...extraHeaders, 'DD-API-KEY': apiKey }, timeoutMs, network);
  if (res.status === 200 && jsonField(res.body, 'valid') === true) return {};
  if (res.status === 200 || res.status === 401 || res.status === 403) {
    throw new ParError(
      'API_KEY_INVALID',
      `the Datadog API does not accept the API key (HTTP ${res.status} from ${url})`,
      'Nothing was enrolled and nothing was changed. Check the API key (and that it belongs to the site the config names), then run again.',
      { status: res.status, endpoint: url },
    );
  }
  if (res.status === 429 || res.status >= 500) return { unproven: `HTTP ${res.status} (a real run retries this within --timeout)` };
  throw new EnrollmentError(
    'API_KEY_CHECK_FAILED',
    `the API key check at ${url} answered HTTP ${res.status}`,
    'Nothing was enrolled and nothing was changed. Check site/dd_url and any proxy in between.',
    { status: res.status, endpoint: url },
  );
}

/** The application key, with the API key already proven: a read-only request that needs both. */
export async function validateAppKey(
  baseUrl: string,
  apiKey: string,
  appKey: string,
  extraHeaders: Record<string, string>,
  timeoutMs: number,
  network?: NetworkSettings,
): Promise<KeyValidation> {
  const url = `${baseUrl}${VALIDATE_KEYS_PATH}`;
  const res = await get(url, baseUrl, { ...extraHeaders, 'DD-API-KEY': apiKey, 'DD-APPLICATION-KEY': appKey }, timeoutMs, network);
  if (res.status === 200 && jsonField(res.body, 'status') === 'ok') return {};
  if (res.status === 200 || res.status === 401 || res.status === 403) {
    throw new ParError(
      'APP_KEY_INVALID',
      `the Datadog API does not accept the application key with this API key (HTTP ${res.status} from ${url}); the API key itself was accepted`,
      'Nothing was enrolled and nothing was changed. Check the application key (DD_APP_KEY, app_key, ' +
        '--app-key-file or the keychain profile; it must belong to the same organization and site as the API key), then run again.',
      { status: res.status, endpoint: url },
    );
  }
  if (res.status === 429 || res.status >= 500)
    return { unproven: `the application key check answered HTTP ${res.status} (a real run retries the enrollment within --timeout)` };
  // A host that is not Datadog's (dd_url through DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS) may not offer it.
  return { unproven: `the application key check at ${url} answered HTTP ${res.status}` };
}
