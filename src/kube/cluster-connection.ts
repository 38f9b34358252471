import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import type { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { KubernetesError } from '../errors.js';
import { type ApiClass, makeClient, type RequestLimits, tlsEnvironmentWarning } from './kube-clients.js';
import { describeProxy } from './kube-proxy.js';
import { KubeTransport } from './kube-transport.js';
import { confirmUsable, findNamed, type KubeCluster, type KubeconfigData, KubeconfigError, type KubeUser } from './kubeconfig.js';
import { existingFiles, loadMerged, splitKubeconfigList } from './kubeconfig-merge.js';
import { serviceAccountDir, serviceAccountNamespace } from './service-account.js';

// One cluster connection per run, resolved as kubectl resolves it, and said out loud.
// Sources, first match wins: --kubeconfig > KUBECONFIG (every listed file, merged with kubectl's
// rules) > kubernetes_kubeconfig_path (agent config) > in-cluster service account > ~/.kube/config.
// kubectl ends at http://localhost:8080 when it finds nothing; we never do. resolveClusterTarget()
// does all of it without @kubernetes/client-node and gives the one transport (kube-transport.ts) every
// request goes through; `watch` stops there, resolveCluster() adds client-node's typed API classes
// fed by that transport (docs/kubernetes-client.md).

export interface ResolveClusterOptions {
  /** --kubeconfig */
  kubeconfig?: string;
  /** --context */
  context?: string;
  /** -n / --namespace */
  namespace?: string;
  /** `kubernetes_kubeconfig_path` from the agent config. */
  configKubeconfig?: string;
  /**
   * `kube_resources_namespace` from the agent config, when the caller's target follows it (the
   * cluster agent's Secret does; a rollout or the Helm Secret do not). `source` names where it was set.
   */
  configNamespace?: { value: string; source: string };
  env: NodeJS.ProcessEnv;
  /** Per-request timeout and the command's remaining time; see kube-clients.ts. */
  limits?: RequestLimits;
  /** Our stdin is a terminal: an exec credential plugin may talk to the operator (its interactiveMode allowing). */
  stdinIsTerminal?: boolean;
}

type ClusterSourceKind = 'flag' | 'KUBECONFIG' | 'agent-config' | 'in-cluster' | 'home';

/** The cluster connection of a run (which apiserver, which credentials), resolved without loading @kubernetes/client-node. */
export interface ClusterTarget {
  /** e.g. "KUBECONFIG /a:/b", "--kubeconfig /x", "in-cluster service account (/var/run/...)". */
  source: string;
  sourceKind: ClusterSourceKind;
  /** Kubeconfig files actually read (none in-cluster). */
  files: string[];
  server: string;
  context?: string;
  user?: string;
  namespace: string;
  /** "--namespace", "kube_resources_namespace (...)", "context <name>", "service-account namespace file", "default". */
  namespaceSource: string;
  /** Inside a Pod, its namespace (the service-account namespace file): the agent's own when run in its Pod. Off-cluster: undefined (docs/protocol.md §6c). */
  agentNamespace?: string;
  /** Lines the command should print as warnings (e.g. NODE_TLS_REJECT_UNAUTHORIZED ignored, KUBECONFIG files missing). */
  warnings: string[];
  limits: RequestLimits;
  /** The merged kubeconfig, its current context the chosen one. */
  config: KubeconfigData;
  /** The current context's cluster and user entries. */
  clusterEntry: KubeCluster;
  userEntry?: KubeUser;
  /** The one transport of this cluster (authentication, TLS, proxy, keep-alive pool); every request of the run goes through it. */
  transport(): KubeTransport;
  /** The proxy requests go through, printable (no credentials): "http://host:port (proxy-url)". */
  proxy?: string;
  /** One line: "<server> (<source>, context <name>, namespace <ns> from <source>)". */
  describe(): string;
}

export interface ClusterConnection extends ClusterTarget {
  /** Lazily created API clients, one per class, all through transport() with the per-request timeout. */
  core(): CoreV1Api;
  apps(): AppsV1Api;
  client<T>(api: ApiClass<T>): T;
}

function notConfigured(message: string, hint: string): KubernetesError {
  return new KubernetesError('KUBE_NOT_CONFIGURED', message, `Nothing was changed. ${hint}`);
}

interface Loaded {
  config: KubeconfigData;
  source: string;
  sourceKind: ClusterSourceKind;
  files: string[];
  warnings: string[];
}

async function loadFiles(files: string[], source: string, sourceKind: ClusterSourceKind): Promise<Loaded> {
  try {
    return { config: await loadMerged(files), source, sourceKind, files, warnings: [] };
  } catch (err) {
    throw notConfigured(
      `cannot load the Kubernetes configuration from ${source}: ${(err as Error).message.split('\n')[0]}`,
      'Check the kubeconfig file.',
    );
  }
}

/** A CA file kubectl would load (certutil.NewPool): readable and holding at least one certificate. */
function loadableCa(path: string): boolean {
  try {
    const pem = readFileSync(path, 'utf8');
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) return false;
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

/**
 * kubectl's in-cluster config (client-go rest.InClusterConfig): KUBERNETES_SERVICE_HOST and _PORT both
 * set and the token file present; the token is read now and again every minute; the CA is used when it
 * loads (kubectl logs and goes on without it otherwise).
 */
function inCluster(env: NodeJS.ProcessEnv): Loaded | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const saDir = serviceAccountDir(env);
  const tokenFile = join(saDir, 'token');
  let isFile = false;
  try {
    isFile = statSync(tokenFile).isFile();
  } catch {
    isFile = false;
  }
  if (!host || !port || !isFile) return undefined;
  const caFile = join(saDir, 'ca.crt');
  let token: string;
  try {
    token = readFileSync(tokenFile, 'utf8');
  } catch (err) {
    throw notConfigured(
      `cannot read the service-account token ${tokenFile}: ${(err as Error).message}`,
      "Check the Pod's service-account token volume.",
    );
  }
  const config: KubeconfigData = {
    clusters: [
      {
        name: 'inCluster',
        server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
        ...(loadableCa(caFile) ? { certificateAuthority: caFile } : {}),
        insecureSkipTlsVerify: false,
        disableCompression: false,
        extensions: {},
        ignoredKeys: [],
      },
    ],
    users: [{ name: 'inClusterUser', token, tokenFile, impersonateGroups: [], impersonateUserExtra: {}, ignoredKeys: [] }],
    contexts: [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser' }],
    currentContext: 'inClusterContext',
  };
  return { config, source: `in-cluster service account (${saDir})`, sourceKind: 'in-cluster', files: [], warnings: [] };
}

async function pickSource(options: ResolveClusterOptions): Promise<Loaded> {
  const { env } = options;
  if (options.kubeconfig) {
    // kubectl: an explicit --kubeconfig must exist.
    if (!existsSync(options.kubeconfig))
      throw notConfigured(`--kubeconfig ${options.kubeconfig} does not exist`, 'Pass the path of an existing kubeconfig file.');
    return loadFiles([options.kubeconfig], `--kubeconfig ${options.kubeconfig}`, 'flag');
  }
  const warnings: string[] = [];
  const listed = splitKubeconfigList(env.KUBECONFIG ?? '');
  if (listed.length > 0) {
    const { found, missing } = existingFiles(listed);
    if (found.length > 0) {
      const loaded = await loadFiles(found, `KUBECONFIG ${found.join(env.KUBECONFIG?.includes(';') ? ';' : ':')}`, 'KUBECONFIG');
      if (missing.length > 0)
        loaded.warnings.push(`KUBECONFIG lists files that do not exist (ignored, as kubectl does): ${missing.join(', ')}`);
      return loaded;
    }
    // kubectl then has an empty config and falls back to the in-cluster config; it never reads ~/.kube/config.
    warnings.push(`KUBECONFIG names no existing file (${missing.join(', ')}); ignored, as kubectl does`);
  }
  if (options.configKubeconfig) {
    if (!existsSync(options.configKubeconfig)) {
      throw notConfigured(
        `kubernetes_kubeconfig_path ${options.configKubeconfig} (agent config) does not exist`,
        'Fix kubernetes_kubeconfig_path, or pass --kubeconfig PATH.',
      );
    }
    const loaded = await loadFiles([options.configKubeconfig], `kubernetes_kubeconfig_path ${options.configKubeconfig}`, 'agent-config');
    loaded.warnings.unshift(...warnings);
    return loaded;
  }
  const cluster = inCluster(env);
  if (cluster) {
    cluster.warnings.unshift(...warnings);
    return cluster;
  }
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  if (listed.length === 0 && existsSync(home)) return loadFiles([home], home, 'home');
  throw notConfigured(
    'no Kubernetes configuration found (no --kubeconfig, KUBECONFIG, kubernetes_kubeconfig_path, service account, or ~/.kube/config)',
    'Run inside the cluster agent Pod, or pass --kubeconfig PATH [--context NAME]. par-identity never falls back to http://localhost:8080.',
  );
}

/**
 * For shell completion (`par-identity completion contexts|namespaces`): the context names of the
 * kubeconfig kubectl would read here, and the namespaces those contexts name. Nothing when there is no
 * kubeconfig, or only the in-cluster service account (its context is no name to type).
 */
export async function kubeconfigNames(env: NodeJS.ProcessEnv): Promise<{ contexts: string[]; namespaces: string[] }> {
  try {
    const { config, sourceKind } = await pickSource({ env });
    if (sourceKind === 'in-cluster') return { contexts: [], namespaces: [] };
    const namespaces = config.contexts.map((c) => c.namespace).filter((ns): ns is string => Boolean(ns));
    return { contexts: config.contexts.map((c) => c.name), namespaces: [...new Set(namespaces)] };
  } catch {
    return { contexts: [], namespaces: [] };
  }
}

function pickNamespace(
  options: ResolveClusterOptions,
  contextNamespace: string | undefined,
  contextName: string | undefined,
): { namespace: string; namespaceSource: string } {
  if (options.namespace) return { namespace: options.namespace, namespaceSource: '--namespace' };
  if (options.configNamespace?.value)
    return { namespace: options.configNamespace.value, namespaceSource: `kube_resources_namespace (${options.configNamespace.source})` };
  if (contextNamespace) return { namespace: contextNamespace, namespaceSource: `context ${contextName}` };
  const sa = serviceAccountNamespace(options.env);
  if (sa) return { namespace: sa, namespaceSource: 'service-account namespace file' };
  return { namespace: 'default', namespaceSource: 'default' };
}

/**
 * Resolves the one cluster of a run, without @kubernetes/client-node. Throws KubernetesError
 * KUBE_NOT_CONFIGURED (exit 9) when nothing usable is found, a named context does not exist, or the
 * context has no cluster.
 */
export async function resolveClusterTarget(options: ResolveClusterOptions): Promise<ClusterTarget> {
  return targetOf(await pickSource(options), options);
}

/**
 * A cluster target from kubeconfig data already read (parseKubeconfig): the same context choice,
 * checks and transport as resolveClusterTarget(), for callers that hold the data (the demo runner,
 * tests that start many watchers).
 */
export function clusterTargetFromConfig(config: KubeconfigData, options: ResolveClusterOptions & { source?: string }): ClusterTarget {
  return targetOf(
    { config: { ...config }, source: options.source ?? 'kubeconfig data', sourceKind: 'flag', files: [], warnings: [] },
    options,
  );
}

function targetOf(loaded: Loaded, options: ResolveClusterOptions): ClusterTarget {
  const { config, source } = loaded;
  if (options.context) {
    if (!findNamed(config.contexts, options.context)) {
      throw notConfigured(
        `context ${options.context} is not in ${source}`,
        `Pick one of: ${config.contexts.map((c) => c.name).join(', ') || '(none)'}.`,
      );
    }
    config.currentContext = options.context;
  }
  const contextName = config.currentContext || undefined;
  const context = contextName ? findNamed(config.contexts, contextName) : undefined;
  if (contextName && !context)
    throw notConfigured(
      `current-context ${contextName} is not defined in ${source}`,
      'Set a current context that exists, or pass --context NAME.',
    );
  if (!contextName || !context) throw notConfigured(`${source} has no current context`, 'Set current-context, or pass --context NAME.');
  const cluster = findNamed(config.clusters, context.cluster);
  if (!cluster?.server)
    throw notConfigured(
      `context ${contextName} in ${source} names no cluster with a server`,
      'Fix the kubeconfig, or pass --context NAME.',
    );
  const userEntry = findNamed(config.users, context.user || undefined);
  const refused = confirmUsable(cluster, userEntry);
  if (refused.length > 0)
    throw notConfigured(
      `the kubeconfig's context ${contextName} in ${source} is not usable: ${refused.join('; ')}`,
      'Fix the kubeconfig (kubectl refuses it too).',
    );
  const warnings = [...loaded.warnings];
  const tlsWarning = tlsEnvironmentWarning(options.env);
  if (tlsWarning) warnings.push(tlsWarning);
  for (const [what, keys] of [
    [`cluster ${cluster.name}`, cluster.ignoredKeys],
    [`user ${userEntry?.name}`, userEntry?.ignoredKeys ?? []],
  ] as const) {
    if (keys.length > 0)
      warnings.push(`the kubeconfig ${what} has keys kubectl does not read, ignored as kubectl ignores them: ${keys.join(', ')}`);
  }
  const { namespace, namespaceSource } = pickNamespace(
    options,
    loaded.sourceKind === 'in-cluster' ? undefined : context.namespace,
    contextName,
  );
  const limits = options.limits ?? {};
  const podNamespace = serviceAccountNamespace(options.env);
  // Built now, so that what kubectl refuses before sending (an unreadable CA, certificate, key or token
  // file, a removed auth-provider) fails here, before any step that needs the cluster starts.
  let transport: KubeTransport;
  try {
    transport = new KubeTransport({
      cluster,
      ...(userEntry ? { user: userEntry } : {}),
      env: options.env,
      limits,
      ...(options.stdinIsTerminal !== undefined ? { stdinIsTerminal: options.stdinIsTerminal } : {}),
    });
  } catch (err) {
    if (err instanceof KubeconfigError)
      throw notConfigured(
        `the kubeconfig's context ${contextName} in ${source} is not usable: ${err.message.split('\n').join(' ')}`,
        'Fix the kubeconfig (kubectl refuses it too).',
      );
    throw err;
  }
  if (transport.anonymous)
    warnings.push(
      `the kubeconfig context ${contextName} has no user credential (kubectl would ask for a username and password): requests are sent without one`,
    );
  return {
    source,
    sourceKind: loaded.sourceKind,
    files: loaded.files,
    server: cluster.server,
    context: contextName,
    ...(context.user ? { user: context.user } : {}),
    namespace,
    namespaceSource,
    ...(podNamespace ? { agentNamespace: podNamespace } : {}),
    warnings,
    limits,
    config,
    clusterEntry: cluster,
    ...(userEntry ? { userEntry } : {}),
    transport: () => transport,
    ...(transport.proxy ? { proxy: describeProxy(transport.proxy) } : {}),
    describe: () => `${cluster.server} (${source}, context ${contextName}; namespace ${namespace} from ${namespaceSource})`,
  };
}

/** resolveClusterTarget() plus client-node's typed API classes fed by its transport (every command but `watch`). */
export async function resolveCluster(options: ResolveClusterOptions): Promise<ClusterConnection> {
  const target = await resolveClusterTarget(options);
  const k8s = await import('./client-node-api.js');
  const clients = new Map<unknown, unknown>();
  const client = <T>(api: ApiClass<T>): T => {
    let c = clients.get(api) as T | undefined;
    if (!c) {
      c = makeClient(k8s, target.transport(), api);
      clients.set(api, c);
    }
    return c;
  };
  return { ...target, core: () => client(k8s.CoreV1Api), apps: () => client(k8s.AppsV1Api), client };
}
