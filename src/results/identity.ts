import type { OneOf } from './envelope.js';

/** Where an identity lives. */
export type TargetKind = 'file' | 'cluster-secret' | 'helm-secret';

export interface FileWhere {
  identityFile: string;
}

export interface SecretWhere {
  namespace: string;
  secretName: string;
  /** Off-cluster: the running cluster agent whose settings the run took, and how they compared with the local ones. */
  clusterAgent?: ClusterAgentReport;
}

/** One outcome compared between the running agent and this host: values printable, keys only by hash. */
export interface AgentSettingReport {
  setting: string;
  agent: string;
  agentSource: string;
  local?: string;
  localSource?: string;
  /** same: the local value leads to the agent's outcome; agent: not stated here, the agent's taken; overridden: --override-agent-settings. */
  outcome: 'same' | 'agent' | 'overridden' | 'mismatch';
}

/** The cluster agent a run found, the layout its installer made, and its settings with their sources. */
export interface ClusterAgentReport {
  /** "namespace/name" of its Deployment. */
  deployment: string;
  how: string;
  layout: 'helm' | 'helm-existing-secret' | 'operator' | 'unknown';
  /** Its image tag. */
  version?: string;
  settings: AgentSettingReport[];
  /** Its config files: read from a ConfigMap or Secret, or not mounted. */
  files: string[];
  /** What could not be read or compared, and why (which verb on which object). */
  notCompared: string[];
  /** The settings --override-agent-settings took from this host. */
  overridden: AgentSettingReport[];
}

/** The fields every result about a target carries. */
export type TargetWhere = OneOf<FileWhere, SecretWhere>;

/** An identity by its names and fingerprint, never its key. */
export interface IdentitySummary {
  urn: string;
  orgId: number;
  runnerId: string;
  region: string;
  /** RFC 7638 thumbprint of the public key. */
  fingerprint: string;
}

/**
 * The signed health check of the identity a run puts in service (before it is written) or, for
 * status, of the one in service. `rejected`: the server answered 401/403 (a verdict on the key);
 * `ok` and `rejected` both false: not proven either way (unavailable until the deadline).
 */
export type VerifyReport =
  | { performed: false }
  | { performed: true; ok: boolean; rejected: boolean; status?: number; reason?: string; attempts: number };
