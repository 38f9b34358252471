import { type RbacObjects, storedRulesFor } from './rbac-objects.js';
import type { PolicyRule } from './types.js';

export interface UserInfo {
  name: string;
  groups: string[];
}

export interface Grant {
  user?: string;
  /** Set: the rules apply only inside this namespace, like a Role bound by a RoleBinding. Unset: cluster-wide, like a ClusterRoleBinding. */
  namespace?: string;
  rules: PolicyRule[];
}

/** authorizer.Attributes as the apiserver derives them from a request (see RequestInfoFactory). */
export interface RequestAttributes {
  user: UserInfo;
  verb: string;
  resourceRequest: boolean;
  path: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** The credential of a request authenticated by a client certificate: this prefix and the certificate's common name. */
export const X509_CREDENTIAL = 'x509:';

interface TokenEntry {
  user: UserInfo;
  grants: Grant[];
  superuser: boolean;
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === '*' || v === verb);
}

function groupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === '*' || g === group);
}

/** rbac/v1 ResourceMatches: "*", exact "resource/subresource", or "*\/subresource". */
function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some((r) => {
    if (r === '*' || r === combined) return true;
    return subresource !== '' && r === `*/${subresource}`;
  });
}

/** An empty list allows every name; otherwise the request must carry one of them (create and plain list/watch carry none). */
function nameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  if (names.length === 0) return true;
  return name !== '' && names.includes(name);
}

function nonResourceMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => {
    if (u === '*' || u === path) return true;
    return u.endsWith('*') && path.startsWith(u.slice(0, -1));
  });
}

function ruleAllows(rule: PolicyRule, a: RequestAttributes): boolean {
  if (!a.resourceRequest) return verbMatches(rule, a.verb) && nonResourceMatches(rule, a.path);
  return (
    verbMatches(rule, a.verb) &&
    groupMatches(rule, a.apiGroup) &&
    resourceMatches(rule, a.resource, a.subresource) &&
    nameMatches(rule, a.name)
  );
}

/** The parts of system:discovery and system:public-info-viewer every authenticated user gets. */
const DISCOVERY_PATHS = [
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
  '/version',
  '/version/',
  '/openapi',
  '/openapi/*',
  '/healthz',
  '/livez',
  '/readyz',
];
const DISCOVERY_RULE: PolicyRule = { verbs: ['get'], nonResourceURLs: DISCOVERY_PATHS };
/** From system:basic-user: anyone may ask who they are and what they themselves can do. */
const SELF_REVIEW_RULES: PolicyRule[] = [
  { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
  { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
];

/**
 * Bearer tokens mapped to users and their rules. Evaluates like the RBAC authorizer: a request is
 * allowed when any applicable rule allows it; namespaced grants only apply to requests in their namespace.
 */
export class Authorizer {
  private readonly tokens = new Map<string, TokenEntry>();
  private stored: RbacObjects | undefined;
  private issued: ((token: string) => UserInfo | undefined) | undefined;

  /**
   * Also accept tokens issued through TokenRequest: `resolve` names their user, who holds no
   * grants of its own and so is authorized by stored RBAC alone, as a service account is.
   */
  useIssuedTokens(resolve: (token: string) => UserInfo | undefined): void {
    this.issued = resolve;
  }

  /** A token's entry: a configured one, or one made up on the spot for a valid issued token. */
  private entryFor(token: string | undefined): TokenEntry | undefined {
    if (!token) return undefined;
    const configured = this.tokens.get(token);
    if (configured) return configured;
    const user = this.issued?.(token);
    return user ? { user, grants: [], superuser: false } : undefined;
  }

  /** Also evaluate Roles, ClusterRoles and their bindings stored in the emulator, as the RBAC authorizer does. */
  useStoredRbac(objects: RbacObjects): void {
    this.stored = objects;
  }

  private storedAllows(a: RequestAttributes): boolean {
    if (!this.stored) return false;
    return storedRulesFor(this.stored, a.user, a.resourceRequest ? a.namespace : '').some((r) => ruleAllows(r, a));
  }

  addSuperuser(token: string, name: string): void {
    this.tokens.set(token, { user: { name, groups: ['system:masters', 'system:authenticated'] }, grants: [], superuser: true });
  }

  addToken(token: string, grant: Grant): void {
    const existing = this.tokens.get(token);
    const name = grant.user ?? existing?.user.name ?? `user-${this.tokens.size}`;
    const groups = ['system:authenticated'];
    const sa = /^system:serviceaccount:([^:]+):/.exec(name);
    if (sa) groups.unshift('system:serviceaccounts', `system:serviceaccounts:${sa[1]}`);
    const entry: TokenEntry = existing ?? { user: { name, groups }, grants: [], superuser: false };
    entry.grants.push({ ...grant, rules: grant.rules.map((r) => structuredClone(r)) });
    this.tokens.set(token, entry);
  }

  /** Rules for the user of a client certificate (its credential is `x509:<common name>`); they add up like addToken's. */
  addClientCertGrant(user: string, grant: Omit<Grant, 'user'>): void {
    const key = `${X509_CREDENTIAL}${user}`;
    const entry: TokenEntry = this.tokens.get(key) ?? { user: { name: user, groups: [] }, grants: [], superuser: false };
    entry.grants.push({ ...grant, rules: grant.rules.map((r) => structuredClone(r)) });
    this.tokens.set(key, entry);
  }

  authenticate(header: string | undefined): UserInfo | undefined {
    return this.entryFor(Authorizer.tokenOf(header))?.user;
  }

  /**
   * `impersonated`: a.user came from Impersonate-User; the token's own grants then do not apply,
   * only what the impersonated user and groups have (system:masters, stored RBAC).
   */
  authorize(token: string | undefined, a: RequestAttributes, impersonated = false): boolean {
    const entry = impersonated ? undefined : this.entryFor(token);
    // A client certificate authenticates on its own (no entry needed): its groups and stored RBAC decide.
    const certificate = !impersonated && token?.startsWith(X509_CREDENTIAL);
    if (!entry && !impersonated && !certificate) return false;
    if (entry?.superuser || ((impersonated || certificate) && a.user.groups.includes('system:masters'))) return true;
    if (!a.resourceRequest && ruleAllows(DISCOVERY_RULE, a)) return true;
    if (SELF_REVIEW_RULES.some((r) => ruleAllows(r, a))) return true;
    const granted = (entry?.grants ?? []).some((g) => {
      if (g.namespace !== undefined) {
        if (!a.resourceRequest || a.namespace !== g.namespace) return false;
      }
      return g.rules.some((r) => ruleAllows(r, a));
    });
    return granted || this.storedAllows(a);
  }

  /** Rules in force for a token in one namespace, in PolicyRule form. */
  rulesFor(
    token: string | undefined,
    namespace: string,
    impersonatedUser?: UserInfo,
  ): { resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[] } {
    const entry = impersonatedUser ? undefined : this.entryFor(token);
    const resourceRules: PolicyRule[] = SELF_REVIEW_RULES.map((r) => structuredClone(r));
    const nonResourceRules: PolicyRule[] = [{ verbs: ['get'], nonResourceURLs: DISCOVERY_PATHS }];
    const user = impersonatedUser ?? entry?.user;
    if (this.stored && user) {
      for (const r of storedRulesFor(this.stored, user, namespace))
        (r.nonResourceURLs?.length ? nonResourceRules : resourceRules).push(structuredClone(r));
    }
    if (impersonatedUser) return { resourceRules, nonResourceRules };
    if (!entry) return { resourceRules: [], nonResourceRules: [] };
    if (entry.superuser) {
      resourceRules.push({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
      nonResourceRules.push({ verbs: ['*'], nonResourceURLs: ['*'] });
    }
    for (const g of entry.grants) {
      if (g.namespace !== undefined && g.namespace !== namespace) continue;
      for (const r of g.rules) {
        if (r.nonResourceURLs?.length) nonResourceRules.push(structuredClone(r));
        else resourceRules.push(structuredClone(r));
      }
    }
    return { resourceRules, nonResourceRules };
  }

  static tokenOf(header: string | undefined): string | undefined {
    return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  }
}

/** responsewriters.forbiddenMessage. */
export function forbiddenReason(a: RequestAttributes): string {
  if (!a.resourceRequest) return `User "${a.user.name}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  if (a.namespace) {
    return `User "${a.user.name}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" in the namespace "${a.namespace}"`;
  }
  return `User "${a.user.name}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" at the cluster scope`;
}
