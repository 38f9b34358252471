import type { Configuration, RequestContext } from '@kubernetes/client-node';
import type { Deadline } from '../time/index.js';
import type { KubeTransport } from './kube-transport.js';

// Deadlines of every Kubernetes request, and client-node's typed API classes fed by our transport
// (kube-transport.ts): the generated code builds each request and reads each answer; sending it,
// authentication, TLS, proxies and the size cap are the transport's, the same for every command.

// exported for tests: the test holds it to client-go's 30 s
export const DEFAULT_KUBE_REQUEST_TIMEOUT_MS = 30_000;

export interface RequestLimits {
  /** Per-request timeout; default 30 s. */
  requestTimeoutMs?: number;
  /**
   * The command's own deadline (--timeout), on the run's clock; a request never outlives it. Read at
   * each request: a rollout replaces it with its own (handOverDeadline).
   */
  deadline?: Deadline;
  /** Aborts every request of the command at once (a run stopped by SIGINT/SIGTERM). */
  signal?: AbortSignal;
}

/**
 * From now on the connection's requests (and exec plugins) are cut by `deadline` instead of the
 * command's, or by none but their own timeout when it is undefined. A rotation's --timeout ends where
 * its rollout begins, which has --rollout-timeout; and once a rollout has changed the workload, the
 * requests that undo its change must not be cut short by any deadline (docs/rollout.md).
 */
export function handOverDeadline(limits: RequestLimits, deadline: Deadline | undefined): void {
  if (deadline) limits.deadline = deadline;
  else delete limits.deadline;
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
  const remaining = limits.deadline?.remainingMs();
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
  const signals = [controller.signal, ...(outer ? [outer] : []), ...(limits.signal ? [limits.signal] : [])];
  return signals.length === 1 ? controller.signal : AbortSignal.any(signals);
}

export function tlsEnvironmentWarning(env: NodeJS.ProcessEnv): string | undefined {
  return env.NODE_TLS_REJECT_UNAUTHORIZED === '0'
    ? 'NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored for Kubernetes: certificates are verified unless the kubeconfig sets insecure-skip-tls-verify'
    : undefined;
}

type KubeApiModule = typeof import('./client-node-api.js');
export type ApiClass<T> = new (configuration: Configuration) => T;

/**
 * A client-node API class whose requests go through `transport`: the generated code's request
 * (method, URL, headers, body) is sent as it is, within the per-request timeout, and its answer read
 * up to the transport's cap. No client-node authentication runs (authMethods is empty).
 */
export function makeClient<T>(k8s: KubeApiModule, transport: KubeTransport, api: ApiClass<T>): T {
  const httpApi = {
    send(context: RequestContext) {
      const body = context.getBody();
      if (body !== undefined && typeof body !== 'string')
        throw new TypeError('par-identity sends Kubernetes request bodies as JSON text only');
      const answer = transport
        .sendBuffered({
          method: context.getHttpMethod(),
          path: context.getUrl(),
          headers: context.getHeaders(),
          ...(body !== undefined ? { body } : {}),
          signal: context.getSignal(),
        })
        .then(
          (res) =>
            new k8s.ResponseContext(res.status, res.headers, {
              text: async () => res.body.toString('utf8'),
              binary: async () => res.body,
              stream: () => null,
            }),
        );
      return new k8s.Observable(answer);
    },
  };
  const configuration = {
    baseServer: new k8s.ServerConfiguration(transport.baseUrl, {}),
    httpApi,
    middleware: [],
    authMethods: {},
  } as unknown as Configuration;
  return new api(configuration);
}
