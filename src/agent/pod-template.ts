import type { V1Container, V1Deployment, V1EnvVar, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { ConfigLayer } from '../config/agent-config.js';
import { sanitizeServerString } from '../sanitize.js';

// The settings a cluster agent runs with, read from its Deployment's Pod template as the kubelet
// builds the container and as the agent then loads its config (docs/configuration.md, "How the
// agent's Pod template is read"): envFrom, then env over it (valueFrom secretKeyRef / configMapKeyRef /
// fieldRef, $(VAR) references), the -c / -E files of its command and args read from the ConfigMaps and
// Secrets mounted at those paths. Pure: the objects come from a reader the caller gives.

/** The cluster agent's main config when -c does not say otherwise (docs/protocol.md §6c). */
const CLUSTER_AGENT_CONFIG = '/etc/datadog-agent/datadog-cluster.yaml';

type ObjectKind = 'configmap' | 'secret';

/** One ConfigMap's or Secret's data (Secret values decoded), `missing` (404), or why it could not be read. */
export type ObjectRead = { data: Record<string, string> } | { missing: true } | { denied: string };

export type ObjectReader = (kind: ObjectKind, namespace: string, name: string) => Promise<ObjectRead>;

type AgentLayout = 'helm' | 'helm-existing-secret' | 'operator' | 'unknown';

/** Where a secretKeyRef points: the Secret the identity env vars of `identityFromExistingSecret` read. */
interface SecretKeyRef {
  namespace: string;
  name: string;
  key: string;
}

export interface AgentSettingsRead {
  deployment: { namespace: string; name: string };
  /** "deployment ns/name". */
  label: string;
  container: string;
  image?: string;
  /** The image tag, when it is a version. */
  version?: string;
  managedBy?: string;
  layout: AgentLayout;
  /** The container's environment as the kubelet gives it (only variables whose value could be had). */
  env: Record<string, string>;
  /** Each variable's origin, printable, never its value. */
  envSources: Record<string, string>;
  /** Variables whose value could not be had, with why (RBAC, a missing object, a field of a Pod not yet made). */
  envUnknown: Record<string, string>;
  /** The main config (when mounted), then the -E files, in the agent's merge order. */
  layers: ConfigLayer[];
  /** What was read for the config files, one line each (mounted, not mounted = the image's own). */
  files: string[];
  /** What could not be read, one line each: "get secret ns/name: forbidden". */
  notRead: string[];
  /** identityFromExistingSecret: the env vars holding the identity itself. */
  identityEnv?: { urn?: SecretKeyRef; privateKey?: SecretKeyRef };
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** The container that runs the cluster agent: by name, else by image or command, else the only one. */
function clusterAgentContainer(containers: V1Container[]): V1Container | undefined {
  return (
    containers.find((c) => c.name === 'cluster-agent') ??
    containers.find(
      (c) => /cluster-agent/.test(c.image ?? '') || [...(c.command ?? []), ...(c.args ?? [])].some((w) => /datadog-cluster-agent/.test(w)),
    ) ??
    (containers.length === 1 ? containers[0] : undefined)
  );
}

/** The tag of an image reference, when it looks like a version (7.81.0, 7.81.0-rc.1, v1.2.3). */
// exported for tests: which image tags read as versions, checked without a Pod
export function imageVersion(image: string | undefined): string | undefined {
  if (!image) return undefined;
  const noDigest = image.split('@')[0] ?? '';
  const colon = noDigest.lastIndexOf(':');
  if (colon < 0 || colon < noDigest.lastIndexOf('/')) return undefined;
  const tag = noDigest.slice(colon + 1).replace(/^v/, '');
  return /^\d+\.\d+\.\d+/.test(tag) ? tag : undefined;
}

/**
 * $(VAR) as the kubelet expands it (third_party/forked/golang/expansion): a defined variable is
 * replaced, $$ is a literal $, an undefined reference is kept as written.
 */
// exported for tests: the kubelet's $(VAR) rules, checked case by case
export function expandKubeletRefs(input: string, vars: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = vars(name);
      out += value ?? `$(${name})`;
      i = close;
    } else {
      out += ch;
    }
  }
  return out;
}

/** -c / --cfgpath and -E / --extracfgpath of an argv, in order (`-E x`, `-E=x`, `-Ex`, `--extracfgpath=x`). */
// exported for tests: every argv form of -c/-E, checked without building a Pod
export function configFlagsOf(argv: string[]): { cfgPath?: string; extra: string[] } {
  let cfgPath: string | undefined;
  const extra: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    const take = (long: string, short: string): string | undefined => {
      if (word === long || word === short) return argv[++i];
      if (word.startsWith(`${long}=`)) return word.slice(long.length + 1);
      if (word.startsWith(short) && !word.startsWith('--')) return word.slice(short.length).replace(/^=/, '');
      return undefined;
    };
    const c = take('--cfgpath', '-c');
    if (c !== undefined) {
      cfgPath = c;
      continue;
    }
    const e = take('--extracfgpath', '-E');
    if (e !== undefined) extra.push(e);
  }
  return { ...(cfgPath !== undefined ? { cfgPath } : {}), extra };
}

/** A file path in the container → the ConfigMap or Secret key mounted there. */
function mountedAt(
  path: string,
  mounts: V1VolumeMount[],
  volumes: V1Volume[],
): { kind: ObjectKind; name: string; key: string; optional: boolean } | { why: string } | undefined {
  const mount = mounts
    .filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath.replace(/\/+$/, '')}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  if (!mount) return undefined;
  const rest = path === mount.mountPath ? '' : path.slice(mount.mountPath.replace(/\/+$/, '').length + 1);
  const inVolume = [mount.subPath, rest].filter(Boolean).join('/');
  const volume = volumes.find((v) => v.name === mount.name);
  const sources: { kind: ObjectKind; name: string; items?: { key: string; path: string }[]; optional: boolean }[] = [];
  if (volume?.configMap?.name)
    sources.push({
      kind: 'configmap',
      name: volume.configMap.name,
      ...(volume.configMap.items ? { items: volume.configMap.items } : {}),
      optional: Boolean(volume.configMap.optional),
    });
  if (volume?.secret?.secretName)
    sources.push({
      kind: 'secret',
      name: volume.secret.secretName,
      ...(volume.secret.items ? { items: volume.secret.items } : {}),
      optional: Boolean(volume.secret.optional),
    });
  for (const p of volume?.projected?.sources ?? []) {
    if (p.configMap?.name)
      sources.push({
        kind: 'configmap',
        name: p.configMap.name,
        ...(p.configMap.items ? { items: p.configMap.items } : {}),
        optional: Boolean(p.configMap.optional),
      });
    if (p.secret?.name)
      sources.push({
        kind: 'secret',
        name: p.secret.name,
        ...(p.secret.items ? { items: p.secret.items } : {}),
        optional: Boolean(p.secret.optional),
      });
  }
  if (sources.length === 0) return { why: `volume ${mount.name} mounted at ${mount.mountPath} is neither a ConfigMap nor a Secret` };
  for (const source of sources) {
    const key = source.items ? source.items.find((item) => item.path === inVolume)?.key : inVolume.includes('/') ? undefined : inVolume;
    if (key) return { kind: source.kind, name: source.name, key, optional: source.optional };
  }
  return { why: `no key of volume ${mount.name} is mounted as ${path}` };
}

function layoutOf(managedBy: string | undefined, labels: Record<string, string>, identityEnv: boolean, extra: string[]): AgentLayout {
  if (identityEnv) return 'helm-existing-secret';
  if (managedBy === 'datadog-operator' || extra.some((f) => f.endsWith('privateactionrunner.yaml'))) return 'operator';
  if (managedBy === 'Helm') return 'helm';
  if (labels['agent.datadoghq.com/component'] === 'cluster-agent' && !labels['app.kubernetes.io/managed-by']) return 'operator';
  return 'unknown';
}

/** The settings the cluster agent of `deployment` runs with; `read` fetches the ConfigMaps and Secrets it references. */
export async function readPodTemplate(deployment: V1Deployment, read: ObjectReader): Promise<AgentSettingsRead> {
  const namespace = deployment.metadata?.namespace ?? 'default';
  const name = deployment.metadata?.name ?? '';
  const label = `deployment ${namespace}/${name}`;
  const labels = deployment.metadata?.labels ?? {};
  const spec = deployment.spec?.template?.spec;
  const container = clusterAgentContainer(spec?.containers ?? []);
  const notRead: string[] = [];
  const cache = new Map<string, Promise<ObjectRead>>();
  const fetch = (kind: ObjectKind, objectName: string): Promise<ObjectRead> => {
    const id = `${kind}/${objectName}`;
    let got = cache.get(id);
    if (!got) {
      got = read(kind, namespace, objectName);
      cache.set(id, got);
    }
    return got;
  };
  const say = (line: string) => {
    if (!notRead.includes(line)) notRead.push(line);
  };
  const shown = (text: string) => sanitizeServerString(text, 200);
  const env: Record<string, string> = {};
  const envSources: Record<string, string> = {};
  const envUnknown: Record<string, string> = {};
  const base = {
    deployment: { namespace, name },
    label,
    managedBy: labels['app.kubernetes.io/managed-by'],
    env,
    envSources,
    envUnknown,
    notRead,
  };
  if (!container) {
    say(`${label}: no container named cluster-agent, none running the cluster-agent image, and not a single container`);
    return { ...base, container: '', layout: 'unknown', layers: [], files: [] };
  }
  const image = container.image;
  const set = (key: string, value: string, source: string) => {
    env[key] = value;
    envSources[key] = source;
    delete envUnknown[key];
  };
  const unknown = (key: string, why: string) => {
    delete env[key];
    delete envSources[key];
    envUnknown[key] = why;
  };
  // envFrom first, in order (a later source wins), then env over it (docs/configuration.md).
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind: ObjectKind = from.configMapRef ? 'configmap' : 'secret';
    if (!ref?.name) continue;
    const got = await fetch(kind, ref.name);
    const what = `${kind} ${namespace}/${shown(ref.name)}`;
    if ('denied' in got) {
      say(got.denied);
      continue;
    }
    if ('missing' in got) {
      if (!ref.optional) say(`${what} (envFrom of ${label}) does not exist`);
      continue;
    }
    for (const [key, value] of Object.entries(got.data)) {
      const varName = `${from.prefix ?? ''}${key}`;
      if (ENV_NAME.test(varName)) set(varName, value, `${what} key ${shown(key)} (envFrom of ${label})`);
    }
  }
  const identityEnv: { urn?: SecretKeyRef; privateKey?: SecretKeyRef } = {};
  for (const item of container.env ?? ([] as V1EnvVar[])) {
    const source = `env ${shown(item.name)} of ${label}`;
    if (item.valueFrom === undefined) {
      set(
        item.name,
        expandKubeletRefs(item.value ?? '', (v) => env[v]),
        source,
      );
      continue;
    }
    const { secretKeyRef, configMapKeyRef, fieldRef } = item.valueFrom;
    const keyRef = secretKeyRef ?? configMapKeyRef;
    if (keyRef?.name && keyRef.key) {
      const kind: ObjectKind = secretKeyRef ? 'secret' : 'configmap';
      if (secretKeyRef && item.name === 'DD_PRIVATE_ACTION_RUNNER_URN') identityEnv.urn = { namespace, name: keyRef.name, key: keyRef.key };
      if (secretKeyRef && item.name === 'DD_PRIVATE_ACTION_RUNNER_PRIVATE_KEY')
        identityEnv.privateKey = { namespace, name: keyRef.name, key: keyRef.key };
      const what = `${kind} ${namespace}/${shown(keyRef.name)} key ${shown(keyRef.key)}`;
      const got = await fetch(kind, keyRef.name);
      if ('denied' in got) {
        say(got.denied);
        unknown(item.name, got.denied);
      } else if ('missing' in got || got.data[keyRef.key] === undefined) {
        const why = `${what} (${source}) does not exist`;
        if (!keyRef.optional) say(why);
        unknown(item.name, why);
      } else {
        set(item.name, got.data[keyRef.key] ?? '', `${what} (${source})`);
      }
    } else if (fieldRef?.fieldPath === 'metadata.namespace') {
      set(item.name, namespace, `the Pod's namespace (${source})`);
    } else {
      unknown(item.name, `${source} comes from ${fieldRef?.fieldPath ?? 'a resource field'}, which only a running Pod has`);
    }
  }
  // The flags, with $(VAR) expanded as the kubelet does in command and args.
  const argv = [...(container.command ?? []), ...(container.args ?? [])].map((w) => expandKubeletRefs(w, (v) => env[v]));
  const flags = configFlagsOf(argv);
  const mainPath =
    flags.cfgPath === undefined
      ? CLUSTER_AGENT_CONFIG
      : /\.ya?ml$/.test(flags.cfgPath)
        ? flags.cfgPath
        : `${flags.cfgPath.replace(/\/+$/, '')}/datadog-cluster.yaml`;
  const layers: ConfigLayer[] = [];
  const files: string[] = [];
  const mounts = container.volumeMounts ?? [];
  const volumes = spec?.volumes ?? [];
  for (const [path, main] of [[mainPath, true], ...flags.extra.map((p) => [p, false] as const)] as const) {
    const at = mountedAt(path, mounts, volumes);
    const role = main ? 'main config' : '-E file';
    if (!at) {
      files.push(
        main
          ? `${role} ${shown(path)}: not mounted (the image's own: the agent's defaults)`
          : `${role} ${shown(path)}: not mounted (the agent cannot read it)`,
      );
      if (!main) say(`${role} ${shown(path)} of ${label} is not mounted from a ConfigMap or Secret`);
      continue;
    }
    if ('why' in at) {
      say(`${role} ${shown(path)}: ${shown(at.why)}`);
      continue;
    }
    const what = `${at.kind} ${namespace}/${shown(at.name)} key ${shown(at.key)} mounted at ${shown(path)}`;
    const got = await fetch(at.kind, at.name);
    if ('denied' in got) {
      say(got.denied);
      files.push(`${role}: ${what}: not read`);
    } else if ('missing' in got || got.data[at.key] === undefined) {
      files.push(`${role}: ${what}: does not exist`);
      if (!at.optional) say(`${what} does not exist`);
    } else {
      layers.push({ source: what, text: got.data[at.key] ?? '' });
      files.push(`${role}: ${what}`);
    }
  }
  const version = imageVersion(image);
  const hasIdentityEnv = Boolean(identityEnv.urn || identityEnv.privateKey);
  return {
    ...base,
    container: container.name,
    ...(image ? { image } : {}),
    ...(version ? { version } : {}),
    layout: layoutOf(base.managedBy, labels, hasIdentityEnv, flags.extra),
    layers,
    files,
    ...(hasIdentityEnv ? { identityEnv } : {}),
  };
}
