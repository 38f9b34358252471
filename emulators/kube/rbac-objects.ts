import { FieldError } from './status-errors.js';
import type { KubeObject, PolicyRule } from './types.js';

// RBAC as stored objects (Role, ClusterRole, RoleBinding, ClusterRoleBinding), evaluated the way
// the RBAC authorizer does, plus the validation the rbac registries apply on write, so
// `kubectl apply --dry-run=server` of deploy/ manifests is checked like on a cluster and
// `kubectl auth can-i --as=system:serviceaccount:NS:NAME` answers from what was applied.

type Obj = Record<string, unknown>;

const RBAC_GROUP = 'rbac.authorization.k8s.io';

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

interface RoleRef {
  apiGroup: string;
  kind: string;
  name: string;
}

/** The stored objects the evaluator reads: a view onto the emulator's store. */
export interface RbacObjects {
  list(kind: 'Role' | 'RoleBinding' | 'ClusterRole' | 'ClusterRoleBinding', namespace?: string): KubeObject[];
}

const SA_PREFIX = 'system:serviceaccount:';

/** rbac/v1 appliesTo: User by name, Group by membership, ServiceAccount by namespace and name. */
function subjectMatches(subject: Subject, user: { name: string; groups: string[] }, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      return user.name === `${SA_PREFIX}${ns}:${subject.name}`;
    }
    default:
      return false;
  }
}

function rulesOf(obj: KubeObject | undefined): PolicyRule[] {
  const rules = obj?.['rules'];
  return Array.isArray(rules) ? (rules as PolicyRule[]) : [];
}

/**
 * Every rule that applies to `user` in `namespace` ('' = cluster scope): ClusterRoleBindings
 * everywhere, RoleBindings of that namespace (to a Role there or a ClusterRole).
 */
export function storedRulesFor(objects: RbacObjects, user: { name: string; groups: string[] }, namespace: string): PolicyRule[] {
  const out: PolicyRule[] = [];
  const clusterRole = (name: string) => objects.list('ClusterRole').find((r) => r.metadata.name === name);
  for (const b of objects.list('ClusterRoleBinding')) {
    const subjects = (b['subjects'] ?? []) as Subject[];
    if (!subjects.some((s) => subjectMatches(s, user, ''))) continue;
    const ref = b['roleRef'] as RoleRef | undefined;
    if (ref?.kind === 'ClusterRole') out.push(...rulesOf(clusterRole(ref.name)));
  }
  if (namespace) {
    for (const b of objects.list('RoleBinding', namespace)) {
      const subjects = (b['subjects'] ?? []) as Subject[];
      if (!subjects.some((s) => subjectMatches(s, user, namespace))) continue;
      const ref = b['roleRef'] as RoleRef | undefined;
      if (ref?.kind === 'ClusterRole') out.push(...rulesOf(clusterRole(ref.name)));
      else if (ref?.kind === 'Role') out.push(...rulesOf(objects.list('Role', namespace).find((r) => r.metadata.name === ref.name)));
    }
  }
  return out;
}

function validateRules(obj: KubeObject, namespaced: boolean, errs: FieldError[]): void {
  const rules = obj['rules'];
  if (rules === undefined || rules === null) return;
  if (!Array.isArray(rules)) {
    errs.push(new FieldError('FieldValueInvalid', 'rules', 'must be a list'));
    return;
  }
  rules.forEach((r: Obj, i) => {
    const at = `rules[${i}]`;
    const list = (k: string) => (Array.isArray(r?.[k]) ? (r[k] as string[]) : []);
    if (list('verbs').length === 0) errs.push(new FieldError('FieldValueRequired', `${at}.verbs`, 'verbs must contain at least one value'));
    const nonResource = list('nonResourceURLs');
    if (nonResource.length > 0) {
      if (namespaced)
        errs.push(
          new FieldError('FieldValueInvalid', `${at}.nonResourceURLs`, 'namespaced rules cannot apply to non-resource URLs', nonResource),
        );
      if (list('apiGroups').length > 0 || list('resources').length > 0 || list('resourceNames').length > 0) {
        errs.push(
          new FieldError(
            'FieldValueInvalid',
            `${at}.nonResourceURLs`,
            'rules cannot apply to both regular resources and non-resource URLs',
            nonResource,
          ),
        );
      }
      return;
    }
    if (list('apiGroups').length === 0)
      errs.push(new FieldError('FieldValueRequired', `${at}.apiGroups`, 'resource rules must supply at least one api group'));
    if (list('resources').length === 0)
      errs.push(new FieldError('FieldValueRequired', `${at}.resources`, 'resource rules must supply at least one resource'));
  });
}

const ROLE_REF_KINDS: Record<string, string[]> = { RoleBinding: ['Role', 'ClusterRole'], ClusterRoleBinding: ['ClusterRole'] };

function validateBinding(kind: string, obj: KubeObject, old: KubeObject | undefined, errs: FieldError[]): void {
  const ref = (obj['roleRef'] ?? {}) as Partial<RoleRef>;
  if (ref.apiGroup !== RBAC_GROUP)
    errs.push(new FieldError('FieldValueNotSupported', 'roleRef.apiGroup', `supported values: "${RBAC_GROUP}"`, ref.apiGroup ?? ''));
  if (!ROLE_REF_KINDS[kind]!.includes(ref.kind ?? '')) {
    errs.push(
      new FieldError(
        'FieldValueNotSupported',
        'roleRef.kind',
        `supported values: ${ROLE_REF_KINDS[kind]!.map((k) => `"${k}"`).join(', ')}`,
        ref.kind ?? '',
      ),
    );
  }
  if (!ref.name) errs.push(new FieldError('FieldValueRequired', 'roleRef.name', ''));
  if (old && JSON.stringify(old['roleRef']) !== JSON.stringify(obj['roleRef'])) {
    errs.push(new FieldError('FieldValueInvalid', 'roleRef', 'cannot change roleRef', obj['roleRef']));
  }
  const subjects = obj['subjects'];
  if (!Array.isArray(subjects)) return;
  subjects.forEach((s: Obj, i) => {
    const at = `subjects[${i}]`;
    if (!s?.['name']) errs.push(new FieldError('FieldValueRequired', `${at}.name`, ''));
    if (s?.['kind'] === 'ServiceAccount') {
      if (s['apiGroup']) errs.push(new FieldError('FieldValueNotSupported', `${at}.apiGroup`, 'supported values: ""', s['apiGroup']));
      if (kind === 'ClusterRoleBinding' && !s['namespace']) errs.push(new FieldError('FieldValueRequired', `${at}.namespace`, ''));
    } else if (s?.['kind'] === 'User' || s?.['kind'] === 'Group') {
      if (s['apiGroup'] !== RBAC_GROUP)
        errs.push(new FieldError('FieldValueNotSupported', `${at}.apiGroup`, `supported values: "${RBAC_GROUP}"`, s['apiGroup'] ?? ''));
    } else {
      errs.push(
        new FieldError('FieldValueNotSupported', `${at}.kind`, 'supported values: "ServiceAccount", "User", "Group"', s?.['kind'] ?? ''),
      );
    }
  });
}

/** Validation of the rbac kinds; the caller collects the errors into one 422. */
export function validateRbac(kind: string, obj: KubeObject, old: KubeObject | undefined, errs: FieldError[]): void {
  switch (kind) {
    case 'Role':
      validateRules(obj, true, errs);
      break;
    case 'ClusterRole':
      validateRules(obj, false, errs);
      break;
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      validateBinding(kind, obj, old, errs);
      break;
  }
}
