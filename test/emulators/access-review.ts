// `kubectl auth can-i`, `can-i --list` and `auth whoami` in JSON: kubectl sends those reviews as
// protobuf, which the Kubernetes emulator does not speak (docs/emulators.md), so tests post the same
// reviews through `kubectl create --raw` (impersonation with --as still applies). Works on the real
// control plane too.

/** Runs kubectl with these args and this stdin. */
export type RunKubectl = (args: string[], stdin: string) => Promise<{ code: number | null; stdout: string; stderr: string }>;

/** Resources of the named API groups that the tests ask about; everything else is the core group. */
const GROUPS: Record<string, string> = {
  deployments: 'apps',
  daemonsets: 'apps',
  replicasets: 'apps',
  controllerrevisions: 'apps',
  roles: 'rbac.authorization.k8s.io',
  rolebindings: 'rbac.authorization.k8s.io',
};

const post = async (run: RunKubectl, path: string, body: object, as?: string) => {
  const r = await run([...(as ? ['--as', as] : []), 'create', '--raw', path, '-f', '-'], JSON.stringify(body));
  if (r.code !== 0) throw new Error(`${path} refused: ${r.stderr}`);
  return JSON.parse(r.stdout);
};

/**
 * `kubectl auth can-i VERB WHAT` as a SelfSubjectAccessReview: WHAT is `resource[.group][/name]`
 * (`secrets/x`, `events.events.k8s.io`, `deployments/agent`). Without a namespace: all namespaces.
 */
export async function canI(
  run: RunKubectl,
  verb: string,
  what: string,
  opts: { namespace?: string; as?: string } = {},
): Promise<'yes' | 'no'> {
  const [kind, name] = what.split('/') as [string, string | undefined];
  const dot = kind.indexOf('.');
  const resource = dot < 0 ? kind : kind.slice(0, dot);
  const group = dot < 0 ? (GROUPS[kind] ?? '') : kind.slice(dot + 1);
  const attributes = { verb, resource, group, ...(name ? { name } : {}), ...(opts.namespace ? { namespace: opts.namespace } : {}) };
  const review = await post(
    run,
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attributes } },
    opts.as,
  );
  return review.status?.allowed === true ? 'yes' : 'no';
}

/** `kubectl auth can-i --list -n NAMESPACE` as a SelfSubjectRulesReview: the resource rules. */
export async function rulesIn(
  run: RunKubectl,
  namespace: string,
  as?: string,
): Promise<{ verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[]> {
  const review = await post(
    run,
    '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
    { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace } },
    as,
  );
  return review.status?.resourceRules ?? [];
}

/** `kubectl auth whoami` as a SelfSubjectReview: the user info. */
export async function whoami(run: RunKubectl): Promise<{ username: string; groups?: string[] }> {
  const review = await post(run, '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  return review.status.userInfo;
}
