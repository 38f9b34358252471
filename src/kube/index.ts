export { type ClusterId, CLUSTER_ID_CONFIGMAP, resolveClusterId } from './cluster-id.js';
export {
  buildIdentitySecret,
  CLUSTER_AGENT_LAYOUT,
  HELM_RUNNER_LAYOUT,
  type SecretLayout,
  describeSecret,
  type IdentitySecretState,
  readIdentitySecret,
  SECRET_KEYS,
  SECRET_LABELS,
  type SecretRef,
  secretExists,
  writeIdentitySecret,
} from './identity-secret.js';
export { DEFAULT_SECRET_NAME, HELM_SECRET_NAME, type ResolvedSecretTarget, resolveSecretTarget } from './secret-target.js';
export {
  agentNamespace,
  type ClusterConnection,
  type ClusterSourceKind,
  type ClusterTarget,
  type ResolveClusterOptions,
  resolveCluster,
  resolveClusterTarget,
  serviceAccountNamespace,
} from './cluster-connection.js';
export { DEFAULT_KUBE_REQUEST_TIMEOUT_MS, KubeRequestTimeout, type RequestLimits, requestSignal } from './kube-clients.js';
export { apiStatus, isNotFound, kubeFailure } from './kube-errors.js';
export {
  buildEvent,
  EventReason,
  type EventReasonName,
  type EventSubject,
  type EventsWriter,
  identityNote,
  type IdentitySummary,
  microTime,
  REPORTING_CONTROLLER,
  type RecordEventInput,
  type RecordEventResult,
  recordEvent,
  secretIdentityEvent,
} from './events.js';
