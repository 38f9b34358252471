import { isDeepStrictEqual } from 'node:util';
import { normalizeCoreEvent } from './event-versions.js';
import type { KindInfo } from './kinds.js';
import { milliValue, parseQuantity } from './quantity.js';
import type { KubeObject } from './types.js';

type Obj = Record<string, unknown>;

function ensure(obj: Obj, key: string): Obj {
  const cur = obj[key];
  if (cur && typeof cur === 'object' && !Array.isArray(cur)) return cur as Obj;
  const fresh: Obj = {};
  obj[key] = fresh;
  return fresh;
}

function setDefault(obj: Obj, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

/**
 * Secret.stringData is write-only: the v1→internal conversion folds it into data (stringData
 * wins on key clashes), so it is never stored or returned.
 */
function foldStringData(obj: KubeObject): void {
  const sd = obj['stringData'];
  if (sd && typeof sd === 'object') {
    const data = ensure(obj, 'data') as Record<string, string>;
    for (const [k, v] of Object.entries(sd as Record<string, unknown>)) {
      data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    }
  }
  delete obj['stringData'];
}

function defaultPodSpec(spec: Obj): void {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'schedulerName', 'default-scheduler');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'securityContext', {});
  const containers = spec['containers'];
  if (Array.isArray(containers)) {
    for (const c of containers as Obj[]) {
      if (!c || typeof c !== 'object') continue;
      setDefault(c, 'terminationMessagePath', '/dev/termination-log');
      setDefault(c, 'terminationMessagePolicy', 'File');
      setDefault(c, 'imagePullPolicy', String(c['image'] ?? '').endsWith(':latest') || !String(c['image'] ?? '').includes(':') ? 'Always' : 'IfNotPresent');
      setDefault(c, 'resources', {});
      const ports = c['ports'];
      if (Array.isArray(ports)) {
        for (const port of ports as Obj[]) {
          if (!port || typeof port !== 'object') continue;
          setDefault(port, 'protocol', 'TCP');
          // SetDefaults_PodSpec: with hostNetwork every container port is also a host port.
          if (spec['hostNetwork'] === true && !port['hostPort']) port['hostPort'] = port['containerPort'];
        }
      }
    }
  }
}

/** Built-in PriorityClasses, as the Priority admission plugin resolves them. */
const BUILTIN_PRIORITIES: Record<string, number> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

/** Pod-only defaults (not templates): requests default to limits, and what Priority admission fills in. */
function defaultPod(spec: Obj): void {
  for (const key of ['initContainers', 'containers']) {
    const list = spec[key];
    if (!Array.isArray(list)) continue;
    for (const c of list as Obj[]) {
      const resources = c && typeof c === 'object' ? (c['resources'] as Obj | undefined) : undefined;
      const limits = resources?.['limits'] as Obj | undefined;
      if (!resources || !limits) continue;
      const requests = ensure(resources, 'requests');
      for (const [name, value] of Object.entries(limits)) setDefault(requests, name, value);
    }
  }
  const className = spec['priorityClassName'];
  setDefault(spec, 'priority', typeof className === 'string' ? (BUILTIN_PRIORITIES[className] ?? 0) : 0);
  setDefault(spec, 'preemptionPolicy', 'PreemptLowerPriority');
  setDefault(spec, 'enableServiceLinks', true);
}

/** GetPodQOS: Guaranteed when every container limits cpu and memory at its requests, BestEffort when nothing is set. */
function podQosClass(spec: Obj | undefined): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [
    ...((Array.isArray(spec?.['initContainers']) ? spec['initContainers'] : []) as Obj[]),
    ...((Array.isArray(spec?.['containers']) ? spec['containers'] : []) as Obj[]),
  ];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const resources = (c?.['resources'] ?? {}) as { requests?: Obj; limits?: Obj };
    for (const name of ['cpu', 'memory']) {
      const req = resources.requests?.[name];
      const lim = resources.limits?.[name];
      if ((parseQuantity(req) ?? 0) > 0 || (parseQuantity(lim) ?? 0) > 0) any = true;
      if (lim === undefined || (req !== undefined && milliValue(req) !== milliValue(lim))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** The scheme defaulting functions that matter to our callers (not the full set). */
export function applyDefaults(info: KindInfo, obj: KubeObject): void {
  switch (info.kind) {
    case 'Secret':
      foldStringData(obj);
      // SetDefaults_Secret treats an empty type (as protobuf clients send it) as unset.
      if (!obj['type']) obj['type'] = 'Opaque';
      break;
    case 'Event':
      normalizeCoreEvent(obj);
      break;
    case 'Namespace':
      ensure(obj, 'spec');
      // The apiserver stamps this immutable label on every namespace (since 1.21).
      obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': obj.metadata.name ?? '' };
      break;
    case 'Pod':
      defaultPodSpec(ensure(obj, 'spec'));
      defaultPod(ensure(obj, 'spec'));
      break;
    case 'Deployment': {
      const s = ensure(obj, 'spec');
      setDefault(s, 'replicas', 1);
      setDefault(s, 'revisionHistoryLimit', 10);
      setDefault(s, 'progressDeadlineSeconds', 600);
      const strategy = ensure(s, 'strategy');
      setDefault(strategy, 'type', 'RollingUpdate');
      // SetDefaults_Deployment also fills a rollingUpdate given with another type (validation then forbids it).
      if (strategy['type'] === 'RollingUpdate' || (strategy['rollingUpdate'] !== undefined && strategy['rollingUpdate'] !== null)) {
        const ru = ensure(strategy, 'rollingUpdate');
        setDefault(ru, 'maxUnavailable', '25%');
        setDefault(ru, 'maxSurge', '25%');
      }
      defaultPodSpec(ensure(ensure(s, 'template'), 'spec'));
      break;
    }
    case 'DaemonSet': {
      const s = ensure(obj, 'spec');
      setDefault(s, 'revisionHistoryLimit', 10);
      const strategy = ensure(s, 'updateStrategy');
      setDefault(strategy, 'type', 'RollingUpdate');
      if (strategy['type'] === 'RollingUpdate') {
        const ru = ensure(strategy, 'rollingUpdate');
        setDefault(ru, 'maxUnavailable', 1);
        setDefault(ru, 'maxSurge', 0);
      }
      defaultPodSpec(ensure(ensure(s, 'template'), 'spec'));
      break;
    }
    case 'ReplicaSet': {
      const s = ensure(obj, 'spec');
      setDefault(s, 'replicas', 1);
      defaultPodSpec(ensure(ensure(s, 'template'), 'spec'));
      break;
    }
    case 'Job':
      defaultJobSpec(ensure(obj, 'spec'));
      defaultJobLabels(obj);
      break;
    case 'CronJob': {
      // SetDefaults_CronJob; the job template gets the pod defaults but not SetDefaults_Job (it is no Job).
      const s = ensure(obj, 'spec');
      setDefault(s, 'concurrencyPolicy', 'Allow');
      setDefault(s, 'suspend', false);
      setDefault(s, 'successfulJobsHistoryLimit', 3);
      setDefault(s, 'failedJobsHistoryLimit', 1);
      defaultPodSpec(ensure(ensure(ensure(ensure(s, 'jobTemplate'), 'spec'), 'template'), 'spec'));
      break;
    }
  }
}

/** SetDefaults_Job (batch/v1, with the gates of 1.32 on) and the pod defaults of its template. */
function defaultJobSpec(s: Obj): void {
  if ((s['completions'] === undefined || s['completions'] === null) && (s['parallelism'] === undefined || s['parallelism'] === null)) {
    s['completions'] = 1;
    s['parallelism'] = 1;
  }
  setDefault(s, 'parallelism', 1);
  setDefault(s, 'backoffLimit', s['backoffLimitPerIndex'] === undefined || s['backoffLimitPerIndex'] === null ? 6 : 2147483647);
  setDefault(s, 'completionMode', 'NonIndexed');
  setDefault(s, 'suspend', false);
  setDefault(s, 'podReplacementPolicy', s['podFailurePolicy'] ? 'Failed' : 'TerminatingOrFailed');
  setDefault(s, 'manualSelector', false);
  defaultPodSpec(ensure(ensure(s, 'template'), 'spec'));
}

/** SetDefaults_Job: a Job without labels takes its template's (defaulting runs on every decode, reads included). */
function defaultJobLabels(job: KubeObject): void {
  const template = ((job['spec'] as Obj | undefined)?.['template'] ?? {}) as { metadata?: { labels?: Record<string, string> } };
  const labels = template.metadata?.labels;
  if (labels && Object.keys(job.metadata.labels ?? {}).length === 0) job.metadata.labels = { ...labels };
}

/** The labels the apiserver puts on a Job's Pod template (legacy names first, then batch.kubernetes.io/). */
export const JOB_NAME_LABELS = ['job-name', 'batch.kubernetes.io/job-name'];
export const CONTROLLER_UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];

/**
 * The job strategy's generateSelector, on create unless spec.manualSelector: the template gets
 * job-name and controller-uid labels (values the user set are kept, and validation then judges
 * them) and the selector matches batch.kubernetes.io/controller-uid. The Job's own labels are then
 * defaulted again, as the next read would.
 */
export function generateJobSelector(info: KindInfo, job: KubeObject): void {
  if (info.kind !== 'Job') return;
  const spec = ensure(job, 'spec');
  if (spec['manualSelector'] === true) return;
  const meta = ensure(ensure(spec, 'template'), 'metadata');
  const labels = { ...((meta['labels'] as Record<string, string> | undefined) ?? {}) };
  for (const key of JOB_NAME_LABELS) labels[key] ??= job.metadata.name ?? '';
  for (const key of CONTROLLER_UID_LABELS) labels[key] ??= job.metadata.uid ?? '';
  meta['labels'] = labels;
  const selector = ensure(spec, 'selector');
  const matchLabels = ensure(selector, 'matchLabels') as Record<string, string>;
  matchLabels[CONTROLLER_UID_LABELS[1]!] ??= job.metadata.uid ?? '';
  defaultJobLabels(job);
}

/** PrepareForCreate: status written by clients on create is reset for kinds owned by controllers. */
export function prepareForCreate(info: KindInfo, obj: KubeObject): void {
  switch (info.kind) {
    case 'Namespace': {
      const spec = ensure(obj, 'spec');
      const finalizers = Array.isArray(spec['finalizers']) ? (spec['finalizers'] as string[]) : [];
      if (!finalizers.includes('kubernetes')) finalizers.push('kubernetes');
      spec['finalizers'] = finalizers;
      obj['status'] = { phase: 'Active' };
      break;
    }
    case 'Pod':
      obj['status'] = { phase: 'Pending', qosClass: podQosClass(obj['spec'] as Obj | undefined) };
      break;
    case 'Deployment':
    case 'DaemonSet':
    case 'ReplicaSet':
    case 'Job':
    case 'CronJob':
      obj['status'] = {};
      break;
  }
}

/** Status-only kinds keep their stored status on main-resource writes; for Namespace, also the phase. */
export function keepStatus(info: KindInfo, next: KubeObject, old: KubeObject): void {
  if (!info.hasStatus) return;
  if (old['status'] === undefined) delete next['status'];
  else next['status'] = structuredClone(old['status']);
}

/** ResetObjectMetaForStatus plus "everything but status comes from the stored object". */
export function statusOnly(next: KubeObject, old: KubeObject): KubeObject {
  const merged = structuredClone(old);
  if (next['status'] === undefined) delete merged['status'];
  else merged['status'] = structuredClone(next['status']);
  merged.metadata.resourceVersion = next.metadata.resourceVersion;
  return merged;
}

/** The annotation apps/v1 DaemonSets carry their (internal) spec.templateGeneration in. */
const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/**
 * What the registry strategies set on every create and main-resource update regardless of who
 * writes: a DaemonSet's template generation starts at 1 and grows by one with each template change.
 */
export function prepareTemplateGeneration(info: KindInfo, next: KubeObject, old?: KubeObject): void {
  if (info.kind !== 'DaemonSet') return;
  let generation = 1;
  if (old) {
    const before = Number(old.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION] ?? '1') || 1;
    const oldTemplate = (old['spec'] as Obj | undefined)?.['template'];
    const newTemplate = (next['spec'] as Obj | undefined)?.['template'];
    generation = isDeepStrictEqual(oldTemplate, newTemplate) ? before : before + 1;
  }
  next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [TEMPLATE_GENERATION_ANNOTATION]: String(generation) };
}
