import type { Configuration, KubeConfig, RequestContext, ResponseContext } from '@kubernetes/client-node';
import { VERSION } from '../version.js';

// How every Kubernetes request is sent: with a deadline, and with TLS verified unless the
// kubeconfig itself says insecure-skip-tls-verify (as kubectl).

export const DEFAULT_KUBE_REQUEST_TIMEOUT_MS = 30_000;

export interface RequestLimits {
  /** Per-request timeout; default 30 s. */
  requestTimeoutMs?: number;
  /** Time left before the command's own deadline, in ms; a request never outlives it. */
  remainingMs?: () => number;
}

/** The reason a request was aborted for taking too long; kubeFailure turns it into KUBE_TIMEOUT. */
export class KubeRequestTimeout extends Error {
  override readonly name = 'TimeoutError';
  constructor(
    readonly timeoutMs: number,
    readonly limitedBy: 'request timeout' | 'command deadline',
  ) {
    super(`no answer within ${timeoutMs} ms (${limitedBy})`);
  }
}

/** The timeout one request gets now: the per-request timeout, cut to what is left of the command's deadline. */
export function effectiveTimeout(limits: RequestLimits): { ms: number; limitedBy: KubeRequestTimeout['limitedBy'] } {
  const perRequest = limits.requestTimeoutMs ?? DEFAULT_KUBE_REQUEST_TIMEOUT_MS;
  const remaining = limits.remainingMs?.();
  if (remaining !== undefined && remaining < perRequest) return { ms: Math.max(0, Math.floor(remaining)), limitedBy: 'command deadline' };
  return { ms: perRequest, limitedBy: 'request timeout' };
}

/** A signal that aborts with KubeRequestTimeout when this request's time is up (combined with `outer` when given). */
export function requestSignal(limits: RequestLimits, outer?: AbortSignal): AbortSignal {
  const { ms, limitedBy } = effectiveTimeout(limits);
  const controller = new AbortController();
  const reason = new KubeRequestTimeout(ms, limitedBy);
  if (ms <= 0) controller.abort(reason);
  // Unref'd: a finished request must not keep the process alive for the rest of its timeout.
  else setTimeout(() => controller.abort(reason), ms).unref();
  return outer ? AbortSignal.any([controller.signal, outer]) : controller.signal;
}

/**
 * client-node leaves rejectUnauthorized unset unless the kubeconfig skips verification, and Node
 * then obeys NODE_TLS_REJECT_UNAUTHORIZED=0. Set it explicitly on this KubeConfig, so only the
 * cluster's own insecure-skip-tls-verify turns verification off. (applyHTTPSOptions is the one
 * place client-node builds TLS options for both API calls and watches; a test fails if that moves.)
 */
export function enforceTlsVerification(kc: KubeConfig): void {
  const target = kc as unknown as { applyHTTPSOptions(opts: { rejectUnauthorized?: boolean }): void };
  const original = target.applyHTTPSOptions.bind(kc);
  target.applyHTTPSOptions = (opts) => {
    original(opts);
    if (!kc.getCurrentCluster()?.skipTLSVerify) opts.rejectUnauthorized = true;
  };
}

export function tlsEnvironmentWarning(env: NodeJS.ProcessEnv): string | undefined {
  return env.NODE_TLS_REJECT_UNAUTHORIZED === '0'
    ? 'NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored for Kubernetes: certificates are verified unless the kubeconfig sets insecure-skip-tls-verify'
    : undefined;
}

export type ApiClass<T> = new (configuration: Configuration) => T;

/** An API client like kc.makeApiClient(), plus the per-request deadline. */
export function makeClient<T>(k8s: typeof import('@kubernetes/client-node'), kc: KubeConfig, api: ApiClass<T>, limits: RequestLimits): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No active cluster!');
  const deadline = {
    pre: async (context: RequestContext) => {
      context.setSignal(requestSignal(limits, context.getSignal()));
      context.setHeaderParam('User-Agent', `par-identity/${VERSION}`);
      return context;
    },
    post: async (context: ResponseContext) => context,
  };
  const configuration = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [deadline],
  });
  return new api(configuration);
}
