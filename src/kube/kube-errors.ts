import { ConflictError, KubernetesError, type ParError } from '../errors.js';

// Turns client-node's ApiException (code + Status body) into our error family with the
// apiserver's own message, and a hint that names the RBAC rule or the next step.

interface StatusBody {
  message?: string;
  reason?: string;
  code?: number;
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

export function kubeFailure(err: unknown, action: string, nextStep: string): ParError {
  const { code, status } = apiStatus(err);
  const said = status?.message ?? (err instanceof Error ? err.message.split('\n')[0] : String(err));
  if (code === 409) return new ConflictError(`${action}: ${said}`, nextStep, { httpStatus: code });
  if (code === 403) {
    return new KubernetesError('KUBE_FORBIDDEN', `${action}: ${said}`, `${nextStep} Grant the service account that verb on that object (Role rules with resourceNames suffice).`, { httpStatus: code });
  }
  if (code === 401) return new KubernetesError('KUBE_UNAUTHORIZED', `${action}: the Kubernetes API rejected the credentials`, `${nextStep} Check the kubeconfig user or the service-account token.`, { httpStatus: code });
  if (code === 422) return new KubernetesError('KUBE_INVALID', `${action}: ${said}`, `${nextStep} An admission rule or validation refused the object.`, { httpStatus: code });
  if (code !== undefined) return new KubernetesError('KUBE_API_ERROR', `${action}: HTTP ${code} ${said}`, nextStep, { httpStatus: code });
  const cause = err as { code?: string; cause?: { code?: string } };
  const errno = cause?.cause?.code ?? cause?.code;
  return new KubernetesError('KUBE_UNREACHABLE', `${action}: the Kubernetes API is unreachable (${errno ?? said})`, `${nextStep} Check --kubeconfig/--context and network access to the API server.`, { errno: errno ?? null });
}
