import type { Authorizer, RequestAttributes, UserInfo } from './rbac.js';
import { badRequest } from './status-errors.js';

interface ReviewSpec {
  resourceAttributes?: {
    namespace?: string;
    verb?: string;
    group?: string;
    resource?: string;
    subresource?: string;
    name?: string;
  };
  nonResourceAttributes?: { path?: string; verb?: string };
  namespace?: string;
}

/** SelfSubjectAccessReview: the authorizer's answer for the caller, as `kubectl auth can-i` asks it. */
export function selfSubjectAccessReview(
  authorizer: Authorizer,
  token: string | undefined,
  user: UserInfo,
  body: unknown,
  impersonated = false,
) {
  const spec = ((body as { spec?: ReviewSpec } | undefined)?.spec ?? {}) as ReviewSpec;
  const ra = spec.resourceAttributes;
  const nra = spec.nonResourceAttributes;
  if (!ra && !nra)
    throw badRequest('SelfSubjectAccessReview: exactly one of nonResourceAttributes or resourceAttributes must be specified');
  const attrs: RequestAttributes = ra
    ? {
        user,
        verb: ra.verb ?? '',
        resourceRequest: true,
        path: '',
        apiGroup: ra.group ?? '',
        resource: ra.resource ?? '',
        subresource: ra.subresource ?? '',
        namespace: ra.namespace ?? '',
        name: ra.name ?? '',
      }
    : {
        user,
        verb: nra?.verb ?? '',
        resourceRequest: false,
        path: nra?.path ?? '',
        apiGroup: '',
        resource: '',
        subresource: '',
        namespace: '',
        name: '',
      };
  const allowed = authorizer.authorize(token, attrs, impersonated);
  return {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed, ...(allowed ? { reason: 'allowed by the emulator grant for this token or a stored RBAC binding' } : {}) },
  };
}

/** SelfSubjectRulesReview: the rules that apply to the caller in one namespace (`kubectl auth can-i --list`). */
export function selfSubjectRulesReview(authorizer: Authorizer, token: string | undefined, body: unknown, impersonatedUser?: UserInfo) {
  const spec = ((body as { spec?: ReviewSpec } | undefined)?.spec ?? {}) as ReviewSpec;
  const { resourceRules, nonResourceRules } = authorizer.rulesFor(token, spec.namespace ?? '', impersonatedUser);
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status: { resourceRules, nonResourceRules, incomplete: false },
  };
}

/** SelfSubjectReview: who the caller is (`kubectl auth whoami`). */
export function selfSubjectReview(user: UserInfo) {
  return {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
    status: { userInfo: { username: user.name, groups: user.groups } },
  };
}
