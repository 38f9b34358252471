export { type ClusterId, CLUSTER_ID_CONFIGMAP, resolveClusterId, storeClusterId } from './cluster-id.js';
export {
  buildIdentitySecret,
  CLUSTER_AGENT_LAYOUT,
  HELM_RUNNER_LAYOUT,
  type SecretLayout,
  describeSecret,
  type IdentitySecretState,
  readIdentitySecret,
  SECRET_KEYS,
  type SecretRef,
  secretExists,
  writeIdentitySecret,
} from './identity-secret.js';
export { DEFAULT_SECRET_NAME, HELM_SECRET_NAME, type ResolvedSecretTarget } from './secret-target.js';
export type { ClusterConnection } from './cluster-connection.js';
export { apiStatus, isNotFound, kubeFailure } from './kube-errors.js';
export {
  EventReason,
  type EventReasonName,
  type RecordEventInput,
  type RecordEventResult,
  recordEvent,
} from './events.js';
