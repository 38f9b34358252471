interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** Same shape as rbac.authorization.k8s.io/v1 PolicyRule. */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed write. `prev` is the state before it (absent for ADDED). */
export interface ChangeEvent {
  type: ChangeType;
  kindKey: string;
  rv: number;
  object: KubeObject;
  prev?: KubeObject;
}
