import { coreToEventsV1, eventsV1FieldLabels, eventsV1ToCore } from './event-versions.js';
import type { KubeObject } from './types.js';

/** What the emulator knows about one served resource, mirroring an APIResource entry plus storage strategy. */
export interface KindInfo {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Kinds with a status subresource: main-resource writes keep the stored status, /status writes keep everything else. */
  hasStatus: boolean;
  /** Kinds whose spec changes bump metadata.generation. */
  tracksGeneration: boolean;
  /** Whether DELETE answers with the deleted object (pods, namespaces) or a Success Status (most others). */
  returnDeletedObject: boolean;
  /** Extra per-kind field selector keys beyond metadata.name / metadata.namespace. */
  fieldLabels: Record<string, (obj: Record<string, unknown>) => string>;
  /** Verbs served (discovery and routing). */
  verbs: string[];
  /** Kinds with an autoscaling/v1 Scale subresource at .../scale mapping to spec.replicas. */
  hasScale: boolean;
  /** Subresources served by their own handlers beyond status and scale (serviceaccounts/token), for discovery. */
  extraSubresources: SubresourceInfo[];
  /** False for request-only kinds (access reviews) that are computed and never stored. */
  stored: boolean;
  /**
   * Another version's storage this kind is a view of (events.k8s.io/v1 Event → "v1/Event"): the
   * store key, and the conversions applied to every body read in and every object served.
   */
  storage?: { key: string; toStorage: (obj: KubeObject) => KubeObject; fromStorage: (obj: KubeObject) => KubeObject };
}

interface SubresourceInfo {
  name: string;
  /** The kind its requests and responses carry. */
  group: string;
  version: string;
  kind: string;
  verbs: string[];
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function apiVersionOf(info: Pick<KindInfo, 'group' | 'version'>): string {
  return info.group ? `${info.group}/${info.version}` : info.version;
}

function kindKey(apiVersion: string, kind: string): string {
  return `${apiVersion}/${kind}`;
}

function path(obj: Record<string, unknown>, ...keys: string[]): string {
  let cur: unknown = obj;
  for (const k of keys) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[k];
  }
  if (cur === undefined || cur === null) return '';
  return String(cur);
}

export class KindRegistry {
  private readonly byKind = new Map<string, KindInfo>();
  private readonly byResource = new Map<string, KindInfo>();

  register(partial: Partial<KindInfo> & Pick<KindInfo, 'group' | 'version' | 'kind' | 'plural' | 'namespaced'>): KindInfo {
    const info: KindInfo = {
      singular: partial.kind.toLowerCase(),
      shortNames: [],
      categories: [],
      hasStatus: false,
      tracksGeneration: false,
      returnDeletedObject: false,
      fieldLabels: {},
      verbs: ALL_VERBS,
      hasScale: false,
      extraSubresources: [],
      stored: true,
      ...partial,
    };
    this.byKind.set(kindKey(apiVersionOf(info), info.kind), info);
    this.byResource.set(`${info.group}/${info.version}/${info.plural}`, info);
    return info;
  }

  byApiVersionKind(apiVersion: string, kind: string): KindInfo | undefined {
    return this.byKind.get(kindKey(apiVersion, kind));
  }

  byGroupVersionResource(group: string, version: string, plural: string): KindInfo | undefined {
    return this.byResource.get(`${group}/${version}/${plural}`);
  }

  all(): KindInfo[] {
    return [...this.byKind.values()];
  }

  groupVersions(): Array<{ group: string; version: string }> {
    const seen = new Map<string, { group: string; version: string }>();
    for (const k of this.byKind.values()) seen.set(`${k.group}/${k.version}`, { group: k.group, version: k.version });
    return [...seen.values()];
  }
}

/** The store key: shared by every version that is a view of the same stored objects. */
export function keyOf(info: KindInfo): string {
  return info.storage?.key ?? kindKey(apiVersionOf(info), info.kind);
}

/** An object as this kind's API version serves it (stored objects are in the storage version). */
export function servedForm(info: KindInfo, obj: KubeObject): KubeObject {
  return info.storage ? info.storage.fromStorage(obj) : obj;
}

/** The kinds the product and the lab touch. Field labels follow each kind's GetAttrs in the apiserver. */
export function defaultKinds(): KindRegistry {
  const r = new KindRegistry();
  r.register({
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    shortNames: ['ns'],
    hasStatus: true,
    returnDeletedObject: true,
    fieldLabels: { 'status.phase': (o) => path(o, 'status', 'phase') },
  });
  r.register({
    group: '',
    version: 'v1',
    kind: 'Secret',
    plural: 'secrets',
    namespaced: true,
    fieldLabels: { type: (o) => path(o, 'type') },
  });
  r.register({ group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, shortNames: ['cm'] });
  r.register({
    group: '',
    version: 'v1',
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    hasStatus: true,
    tracksGeneration: true,
    returnDeletedObject: true,
    fieldLabels: {
      'spec.nodeName': (o) => path(o, 'spec', 'nodeName'),
      'spec.restartPolicy': (o) => path(o, 'spec', 'restartPolicy'),
      'spec.schedulerName': (o) => path(o, 'spec', 'schedulerName'),
      'spec.serviceAccountName': (o) => path(o, 'spec', 'serviceAccountName'),
      'spec.hostNetwork': (o) => (path(o, 'spec', 'hostNetwork') === 'true' ? 'true' : 'false'),
      'status.phase': (o) => path(o, 'status', 'phase'),
      'status.podIP': (o) => path(o, 'status', 'podIP'),
      'status.nominatedNodeName': (o) => path(o, 'status', 'nominatedNodeName'),
    },
  });
  r.register({
    group: '',
    version: 'v1',
    kind: 'Node',
    plural: 'nodes',
    namespaced: false,
    shortNames: ['no'],
    hasStatus: true,
    fieldLabels: { 'spec.unschedulable': (o) => (path(o, 'spec', 'unschedulable') === 'true' ? 'true' : 'false') },
  });
  r.register({
    group: '',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    shortNames: ['ev'],
    fieldLabels: {
      'involvedObject.kind': (o) => path(o, 'involvedObject', 'kind'),
      'involvedObject.namespace': (o) => path(o, 'involvedObject', 'namespace'),
      'involvedObject.name': (o) => path(o, 'involvedObject', 'name'),
      'involvedObject.uid': (o) => path(o, 'involvedObject', 'uid'),
      'involvedObject.apiVersion': (o) => path(o, 'involvedObject', 'apiVersion'),
      'involvedObject.resourceVersion': (o) => path(o, 'involvedObject', 'resourceVersion'),
      'involvedObject.fieldPath': (o) => path(o, 'involvedObject', 'fieldPath'),
      reason: (o) => path(o, 'reason'),
      reportingComponent: (o) => path(o, 'reportingComponent'),
      source: (o) => path(o, 'source', 'component'),
      type: (o) => path(o, 'type'),
    },
  });
  for (const [kind, plural, shortNames] of [
    ['Deployment', 'deployments', ['deploy']],
    ['DaemonSet', 'daemonsets', ['ds']],
    ['ReplicaSet', 'replicasets', ['rs']],
  ] as const) {
    r.register({
      group: 'apps',
      version: 'v1',
      kind,
      plural,
      namespaced: true,
      shortNames: [...shortNames],
      categories: ['all'],
      hasStatus: true,
      hasScale: kind !== 'DaemonSet',
      tracksGeneration: true,
      fieldLabels: kind === 'ReplicaSet' ? { 'status.replicas': (o) => path(o, 'status', 'replicas') || '0' } : {},
    });
  }
  r.register({ group: 'apps', version: 'v1', kind: 'ControllerRevision', plural: 'controllerrevisions', namespaced: true });
  // After apps, as the apiserver orders its groups.
  r.register({
    group: 'events.k8s.io',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    shortNames: ['ev'],
    fieldLabels: eventsV1FieldLabels(path),
    storage: { key: kindKey('v1', 'Event'), toStorage: eventsV1ToCore, fromStorage: coreToEventsV1 },
  });
  // What deploy/ manifests create: a ServiceAccount, RBAC objects, a CronJob (and PDBs rollout reads).
  r.register({
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
    shortNames: ['sa'],
    extraSubresources: [{ name: 'token', group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] }],
  });
  for (const [kind, plural, namespaced] of [
    ['Role', 'roles', true],
    ['RoleBinding', 'rolebindings', true],
    ['ClusterRole', 'clusterroles', false],
    ['ClusterRoleBinding', 'clusterrolebindings', false],
  ] as const) {
    r.register({ group: 'rbac.authorization.k8s.io', version: 'v1', kind, plural, namespaced });
  }
  r.register({
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    namespaced: true,
    shortNames: ['cj'],
    categories: ['all'],
    hasStatus: true,
  });
  // What `kubectl create job --from=cronjob/...` makes; no short name, as in the apiserver.
  r.register({
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    plural: 'jobs',
    namespaced: true,
    categories: ['all'],
    hasStatus: true,
    tracksGeneration: true,
    fieldLabels: { 'status.successful': (o) => path(o, 'status', 'succeeded') || '0' },
  });
  r.register({
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
    shortNames: ['pdb'],
    hasStatus: true,
    tracksGeneration: true,
  });
  for (const [kind, plural] of [
    ['SelfSubjectAccessReview', 'selfsubjectaccessreviews'],
    ['SelfSubjectRulesReview', 'selfsubjectrulesreviews'],
  ] as const) {
    r.register({ group: 'authorization.k8s.io', version: 'v1', kind, plural, namespaced: false, verbs: ['create'], stored: false });
  }
  r.register({
    group: 'authentication.k8s.io',
    version: 'v1',
    kind: 'SelfSubjectReview',
    plural: 'selfsubjectreviews',
    namespaced: false,
    verbs: ['create'],
    stored: false,
  });
  return r;
}
