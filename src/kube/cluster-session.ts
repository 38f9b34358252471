import type { CoreV1Api } from '@kubernetes/client-node';
import type { ClusterConnection } from './cluster-connection.js';

// The resolved connection a run works on, as a type: the session layer resolves it (src/session/
// connection.ts) and passes it down, and the pipeline's targets, the rollout and the status views
// take it, so the type sits below all of them.

export interface ClusterSession {
  conn: ClusterConnection;
  core: CoreV1Api;
  /** -n, else (cluster agent Secret) kube_resources_namespace, else the context's, else the service account's, else default. */
  namespace: string;
  namespaceSource: string;
}

export type ClusterAccess = () => Promise<ClusterSession>;
