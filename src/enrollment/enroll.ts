import { CredentialsRejectedError, EnrollmentError } from '../errors.js';
import { classifyStatus } from './classify-status.js';
import { sanitizeServerString } from '../sanitize.js';
import { type EnrollmentInput, buildEnrollmentRequest } from './enrollment-request.js';
import { type EnrollmentResult, parseEnrollmentResponse, serverMessage } from './enrollment-response.js';
import type { NetworkSettings } from '../config/network-settings.js';
import { ResponseTooLargeError } from '../http-body.js';
import { type HttpResponse, describeNetworkError, exchange, networkErrorCode } from './http-exchange.js';
import { type Attempt, type Deadline, defaultRetryPolicy, parseRetryAfter, type RetryPolicy, retryUntil } from '../time/index.js';
import { TLS_HINT, tlsCertificateErrorCode } from './tls-errors.js';

interface EnrollOptions {
  /** The run's deadline (--timeout), its clock included: every attempt and every wait stays within it. */
  deadline: Deadline;
  policy?: RetryPolicy;
  /** Progress for the operator: one line per retry, never containing keys. */
  onRetry?: (attempt: number, reason: string, waitMs: number) => void;
  /**
   * Each attempt that failed without a definite answer: `unsent` when the error proves the request
   * never reached a server (NOT_SENT), else `unknown` (the server may have registered the key).
   */
  onAttemptFailed?: (outcome: 'unsent' | 'unknown') => void;
  /** Proxy and TLS from the agent config; default: direct, verified, TLS 1.2+. */
  network?: NetworkSettings;
}

interface EnrollOutcome extends EnrollmentResult {
  attempts: number;
  endpoint: string;
  runnerName: string;
}

const NOTHING_WRITTEN = 'The identity was not changed.';

/**
 * Network errors raised before a request could reach any server: no connection was made (refused, no
 * route), or the name could not be resolved yet (EAI_AGAIN: the resolver did not answer). Such an
 * attempt registered nothing; it is retried all the same.
 */
const NOT_SENT: ReadonlySet<string> = new Set(['ECONNREFUSED', 'EAI_AGAIN', 'EAI_FAIL', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

function failFromResponse(res: HttpResponse, endpoint: string): never {
  const kind = classifyStatus(res.status);
  if (kind === 'credentials') throw new CredentialsRejectedError(res.status, endpoint);
  if (kind === 'redirect') {
    // The server's words, printed and put in --json: a C1 CSI (0x9B) in a header is latin1 U+009B.
    const location = res.headers.location === undefined ? '(no Location)' : sanitizeServerString(res.headers.location, 200);
    throw new EnrollmentError(
      'ENROLL_REDIRECT_REFUSED',
      `the enrollment API answered HTTP ${res.status} redirecting to ${location}; redirects are not followed so the API key is never sent elsewhere`,
      `${NOTHING_WRITTEN} Check site/dd_url and any proxy in between, then run again.`,
      { status: res.status, location },
    );
  }
  const said = serverMessage(res.body);
  throw new EnrollmentError(
    'ENROLL_REJECTED',
    `the enrollment API rejected the request with HTTP ${res.status}${said ? `: ${said}` : ''}`,
    `${NOTHING_WRITTEN} This is not retried: fix what the server reports (site, endpoint, request headers), then run again.`,
    { status: res.status },
  );
}

/** Enrolls once per call; retries reuse the very same request, hence the same public key. */
export async function enroll(input: EnrollmentInput, options: EnrollOptions): Promise<EnrollOutcome> {
  const { deadline } = options;
  const { clock } = deadline;
  // What was left when enrolling began: the time the failure message names.
  const budgetMs = deadline.remainingMs();
  const request = buildEnrollmentRequest(input);
  const endpoint = request.url;
  const attempt = async (_n: number, remainingMs: number): Promise<Attempt<EnrollmentResult>> => {
    let res: HttpResponse;
    try {
      res = await exchange('POST', request.url, request.headers, request.body, Math.min(remainingMs, 30_000), options.network);
    } catch (err) {
      const tls = tlsCertificateErrorCode(err);
      if (tls) {
        throw new EnrollmentError(
          'TLS_UNTRUSTED',
          `TLS certificate of ${new URL(endpoint).host} not trusted (${tls})`,
          `${NOTHING_WRITTEN} ${TLS_HINT}`,
          { tlsError: tls },
        );
      }
      if (err instanceof ResponseTooLargeError) {
        throw new EnrollmentError(
          'ENROLL_BAD_RESPONSE',
          `the enrollment API sent a ${err.message}`,
          `${NOTHING_WRITTEN} Check for a proxy or captive portal answering in place of Datadog.`,
        );
      }
      // A name that does not exist will not exist on the next try either (EAI_AGAIN, a resolver that
      // did not answer, and connection errors are retried).
      if (networkErrorCode(err) === 'ENOTFOUND') {
        const host = new URL(endpoint).hostname;
        const via = options.network?.proxy.https || options.network?.proxy.http ? ' (or the proxy host)' : '';
        throw new EnrollmentError(
          'ENROLL_HOST_UNKNOWN',
          `the host ${host}${via} does not resolve (ENOTFOUND)`,
          `${NOTHING_WRITTEN} Not retried: check the site / dd_url setting that names ${host} ` +
            '(the run prints which setting it came from) and the DNS of this machine, then run again.',
          { host },
        );
      }
      options.onAttemptFailed?.(NOT_SENT.has(networkErrorCode(err) ?? '') ? 'unsent' : 'unknown');
      return { done: false, reason: describeNetworkError(err) };
    }
    const kind = classifyStatus(res.status);
    if (kind === 'ok') return { done: true, value: parseEnrollmentResponse(res.body) };
    if (kind !== 'retry') failFromResponse(res, endpoint);
    options.onAttemptFailed?.('unknown');
    const retryAfterMs = parseRetryAfter(res.headers['retry-after'], clock.now());
    return { done: false, reason: `HTTP ${res.status}`, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  };
  const outcome = await retryUntil(attempt, {
    deadline,
    policy: options.policy ?? defaultRetryPolicy,
    signal: options.network?.signal,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });
  if (outcome.value) return { ...outcome.value, attempts: outcome.attempts, endpoint, runnerName: request.runnerName };
  const attempts = `${outcome.attempts} attempt${outcome.attempts === 1 ? '' : 's'}`;
  throw new EnrollmentError(
    'ENROLL_TIMEOUT',
    `enrollment did not succeed within ${Math.round(budgetMs / 1000)} s ` +
      `(${attempts}; last: ${outcome.lastReason ?? 'none'}) at ${endpoint}`,
    `${NOTHING_WRITTEN} Check network access to the API (proxy: HTTPS_PROXY/NO_PROXY), or raise --timeout, then run again.`,
    { attempts: outcome.attempts, lastReason: outcome.lastReason ?? null },
  );
}
