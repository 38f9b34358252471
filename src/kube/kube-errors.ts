import { ConflictError, KubernetesError, type ParError } from '../errors.js';
import { ResponseTooLargeError } from '../http-body.js';
import { sanitizeServerString } from '../sanitize.js';
import { KubeRequestTimeout } from './kube-clients.js';

// Turns client-node's ApiException (code + Status body) and fetch failures into our error family
// with the apiserver's own message (sanitised: it is server text), and a hint that names the RBAC
// rule or the next step. Timeouts and certificate failures get their own codes: neither is retried.

export interface StatusBody {
  message?: string;
  reason?: string;
  code?: number;
}

const MAX_SERVER_TEXT = 500;

/**
 * The API server answered, but with something that is not what it answers: a 2xx body that is not
 * JSON, a Secret whose data values are not strings. kubeFailure makes it KUBE_BAD_RESPONSE: the
 * server was reached, so "unreachable" would send the operator to the wrong place.
 */
export class KubeBadResponse extends Error {
  override readonly name = 'KubeBadResponse';
}

/** A 2xx body that does not parse: JSON.parse's SyntaxError, wherever in the client it was parsed. */
function badResponseOf(err: unknown): string | undefined {
  if (err instanceof KubeBadResponse) return err.message;
  if (err instanceof SyntaxError) return 'its answer is not valid JSON';
  return undefined;
}

/**
 * A non-2xx answer of the API server: its HTTP status and its body (a Status object when it sent one,
 * else its text as the message). The typed API calls throw client-node's ApiException instead, which
 * has the same two fields; apiStatus() reads either.
 */
export class KubeApiStatus extends Error {
  override readonly name = 'KubeApiStatus';
  constructor(
    readonly code: number,
    readonly body: StatusBody,
    /** The answer's Retry-After header as sent (429 and 503 carry one), for a caller that retries. */
    readonly retryAfter?: string,
  ) {
    super(`HTTP ${code}`);
  }

  static from(code: number, text: string, retryAfter?: string): KubeApiStatus {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return new KubeApiStatus(
      code,
      typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as StatusBody) : { message: text },
      retryAfter,
    );
  }
}

export function apiStatus(err: unknown): { code?: number; status?: StatusBody } {
  const e = err as { code?: unknown; body?: unknown };
  if (typeof e?.code !== 'number') return {};
  let body = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      body = { message: body };
    }
  }
  return { code: e.code, status: (body ?? {}) as StatusBody };
}

export function isNotFound(err: unknown): boolean {
  return apiStatus(err).code === 404;
}

/** OpenSSL / Node verification failures: the server's certificate is not trusted by this client. */
const CERT_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
  'INVALID_CA',
]);

/** Walks err → cause → cause… for the first value of `key` (fetch wraps socket errors twice). */
function findInCauses(err: unknown, pick: (e: Record<string, unknown>) => unknown): unknown {
  let cur: unknown = err;
  for (let depth = 0; depth < 5 && cur && typeof cur === 'object'; depth++) {
    const found = pick(cur as Record<string, unknown>);
    if (found !== undefined) return found;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function timeoutOf(err: unknown): KubeRequestTimeout | { timeoutMs?: undefined } | undefined {
  const found = findInCauses(err, (e) => (e instanceof KubeRequestTimeout ? e : e.name === 'TimeoutError' ? e : undefined));
  return found as KubeRequestTimeout | undefined;
}

function certificateErrorOf(err: unknown): string | undefined {
  const code = findInCauses(err, (e) => (typeof e.code === 'string' && CERT_ERRORS.has(e.code) ? e.code : undefined));
  return code as string | undefined;
}

export function kubeFailure(err: unknown, action: string, nextStep: string): ParError {
  if (err instanceof KubernetesError || err instanceof ConflictError) return err;
  const { code, status } = apiStatus(err);
  const said = sanitizeServerString(
    status?.message ?? (err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err)),
    MAX_SERVER_TEXT,
  );
  if (code === 409) return new ConflictError(`${action}: ${said}`, nextStep, { httpStatus: code });
  if (code === 403) {
    return new KubernetesError(
      'KUBE_FORBIDDEN',
      `${action}: ${said}`,
      `${nextStep} Grant the service account that verb on that object (Role rules with resourceNames suffice).`,
      { httpStatus: code },
    );
  }
  if (code === 401)
    return new KubernetesError(
      'KUBE_UNAUTHORIZED',
      `${action}: the Kubernetes API rejected the credentials`,
      `${nextStep} Check the kubeconfig user or the service-account token.`,
      { httpStatus: code },
    );
  if (code === 422)
    return new KubernetesError('KUBE_INVALID', `${action}: ${said}`, `${nextStep} An admission rule or validation refused the object.`, {
      httpStatus: code,
    });
  if (code !== undefined) return new KubernetesError('KUBE_API_ERROR', `${action}: HTTP ${code} ${said}`, nextStep, { httpStatus: code });
  if (err instanceof ResponseTooLargeError) {
    return new KubernetesError(
      'KUBE_RESPONSE_TOO_LARGE',
      `${action}: the Kubernetes API answered more than ${err.limit / 1024 / 1024} MiB; the rest was not read`,
      `${nextStep} Check that --kubeconfig/--context point at an API server, and narrow the request (a namespace) if the cluster is that large.`,
      { limitBytes: err.limit },
    );
  }
  const bad = badResponseOf(err);
  if (bad !== undefined) {
    return new KubernetesError(
      'KUBE_BAD_RESPONSE',
      `${action}: the Kubernetes API answered, but ${sanitizeServerString(bad, MAX_SERVER_TEXT)}`,
      `${nextStep} The API server was reached: check that --kubeconfig/--context point at a Kubernetes API server ` +
        'and not a proxy or another service answering in its place, then run again.',
      {},
      err,
    );
  }
  const timeout = timeoutOf(err);
  if (timeout) {
    // Rounded down to 0.1 s: the time said is never more than the time there was (4.96 s left is 4.9).
    const within =
      timeout instanceof KubeRequestTimeout
        ? timeout.timeoutMs > 0
          ? ` within ${Math.floor(timeout.timeoutMs / 100) / 10} s (${timeout.limitedBy})`
          : ' (the command deadline had passed before the call)'
        : '';
    return new KubernetesError(
      'KUBE_TIMEOUT',
      `${action}: no answer from the Kubernetes API${within}`,
      `${nextStep} The API server did not answer in time; check its health and the network, ` +
        'then run again (the per-request timeout is 30 s, capped by --timeout).',
      { timeoutMs: timeout.timeoutMs ?? null },
      err,
    );
  }
  const cert = certificateErrorOf(err);
  if (cert) {
    return new KubernetesError(
      'KUBE_TLS_UNTRUSTED',
      `${action}: the Kubernetes API server's certificate is not trusted (${cert})`,
      `${nextStep} Set certificate-authority or certificate-authority-data for the cluster in the kubeconfig, ` +
        'or add the CA with NODE_EXTRA_CA_CERTS=/path/ca.pem. NODE_TLS_REJECT_UNAUTHORIZED is ignored; ' +
        "only the kubeconfig's insecure-skip-tls-verify turns verification off.",
      { tlsError: cert },
      err,
    );
  }
  const errno = findInCauses(err, (e) => (typeof e.code === 'string' ? e.code : undefined)) as string | undefined;
  return new KubernetesError(
    'KUBE_UNREACHABLE',
    `${action}: the Kubernetes API is unreachable (${errno ?? said})`,
    `${nextStep} Check --kubeconfig/--context and network access to the API server.`,
    { errno: errno ?? null },
  );
}
