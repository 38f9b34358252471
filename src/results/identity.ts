import type { OneOf } from './envelope.js';

/** Where an identity lives. */
export type TargetKind = 'file' | 'cluster-secret' | 'helm-secret';

export interface FileWhere {
  identityFile: string;
}

export interface SecretWhere {
  namespace: string;
  secretName: string;
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
export type VerifyReport = { performed: false } | { performed: true; ok: boolean; rejected: boolean; status?: number; reason?: string; attempts: number };
