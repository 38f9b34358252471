import { randomBytes } from 'node:crypto';
import type { UserInfo } from './rbac.js';
import type { KubeObject } from './types.js';

/**
 * The audiences kube-apiserver accepts (--api-audiences, which defaults to the issuer); a
 * TokenRequest without spec.audiences gets these, and only tokens naming one of them
 * authenticate against the API.
 */
export const API_AUDIENCES = ['https://kubernetes.default.svc.cluster.local'];

/** spec.boundObjectRef, resolved: the object whose deletion also ends the token. */
export interface BoundObject {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/** Reads an object from the store at authentication time (namespace undefined for cluster-scoped kinds). */
type ObjectLookup = (apiVersion: string, kind: string, namespace: string | undefined, name: string) => KubeObject | undefined;

const DELETION_TOLERANCE_MS = 60_000;

interface IssuedToken {
  namespace: string;
  name: string;
  /** The ServiceAccount's uid when issued: a recreated account of the same name does not inherit its tokens. */
  uid: string;
  audiences: string[];
  expiresAtMs: number;
  bound?: BoundObject;
}

/**
 * Service-account tokens issued through TokenRequest. They are opaque random strings (nothing
 * reads them as JWTs) remembered with their claims; like bound tokens they stop authenticating
 * when they expire or when the ServiceAccount, or the Pod, Secret or Node they are bound to, is
 * deleted (or replaced by one with a new uid).
 */
export class ServiceAccountTokens {
  private readonly issued = new Map<string, IssuedToken>();

  constructor(private readonly lookup: ObjectLookup) {}

  issue(sa: KubeObject, audiences: string[], expiresAtMs: number, bound?: BoundObject): string {
    const token = `sa-${randomBytes(24).toString('base64url')}`;
    this.issued.set(token, {
      namespace: sa.metadata.namespace!,
      name: sa.metadata.name!,
      uid: sa.metadata.uid!,
      audiences: [...audiences],
      expiresAtMs,
      ...(bound ? { bound: { ...bound } } : {}),
    });
    return token;
  }

  /** The user a token authenticates as, or undefined (expired, wrong audience, account gone). */
  authenticate(token: string): UserInfo | undefined {
    const t = this.issued.get(token);
    if (!t) return undefined;
    if (Date.now() >= t.expiresAtMs) return undefined;
    if (!t.audiences.some((a) => API_AUDIENCES.includes(a))) return undefined;
    if (!this.alive('v1', 'ServiceAccount', t.namespace, t.name, t.uid)) return undefined;
    if (
      t.bound &&
      !this.alive(t.bound.apiVersion, t.bound.kind, t.bound.kind === 'Node' ? undefined : t.namespace, t.bound.name, t.bound.uid)
    ) {
      return undefined;
    }
    return {
      name: `system:serviceaccount:${t.namespace}:${t.name}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${t.namespace}`, 'system:authenticated'],
    };
  }

  /**
   * Still there under the same uid. One marked for deletion (a Terminating Pod, an object held by
   * finalizers) keeps vouching for a minute past its deletionTimestamp, as the token validator allows.
   */
  private alive(apiVersion: string, kind: string, namespace: string | undefined, name: string, uid: string): boolean {
    const obj = this.lookup(apiVersion, kind, namespace, name);
    if (obj === undefined || obj.metadata.uid !== uid) return false;
    const deleting = obj.metadata.deletionTimestamp;
    return !deleting || Date.parse(deleting) >= Date.now() - DELETION_TOLERANCE_MS;
  }
}
