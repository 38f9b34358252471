import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubernetesError } from '../errors.js';
import { SERVICE_ACCOUNT_DIR } from '../config/runtime-environment.js';

// How we reach the cluster, said out loud. client-node's loadFromDefault() silently ends at
// http://localhost:8080 when it finds nothing; we resolve the sources ourselves and fail clearly.

export interface KubeConnectionOptions {
  kubeconfig?: string;
  context?: string;
  /** `kubernetes_kubeconfig_path` from the agent config. */
  configKubeconfig?: string;
  env: NodeJS.ProcessEnv;
}

export interface KubeConnection {
  kc: import('@kubernetes/client-node').KubeConfig;
  source: string;
  server: string;
  context?: string;
}

/** Test hook: a directory standing in for / when looking for the service-account files. */
export function serviceAccountDir(env: NodeJS.ProcessEnv): string {
  return `${env.PAR_IDENTITY_SA_ROOT ?? ''}${SERVICE_ACCOUNT_DIR}`;
}

export function serviceAccountNamespace(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return readFileSync(join(serviceAccountDir(env), 'namespace'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function pickKubeconfig(options: KubeConnectionOptions): { path: string; source: string } | undefined {
  if (options.kubeconfig) return { path: options.kubeconfig, source: `--kubeconfig ${options.kubeconfig}` };
  const fromEnv = options.env.KUBECONFIG?.split(':').find(Boolean);
  if (fromEnv) return { path: fromEnv, source: `KUBECONFIG ${fromEnv}` };
  if (options.configKubeconfig) return { path: options.configKubeconfig, source: `kubernetes_kubeconfig_path ${options.configKubeconfig}` };
  return undefined;
}

export async function connectKube(options: KubeConnectionOptions): Promise<KubeConnection> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  let source: string;
  const file = pickKubeconfig(options);
  const saDir = serviceAccountDir(options.env);
  const home = join(options.env.HOME ?? homedir(), '.kube', 'config');
  try {
    if (file) {
      kc.loadFromFile(file.path);
      source = file.source;
    } else if (options.env.KUBERNETES_SERVICE_HOST && existsSync(join(saDir, 'token'))) {
      kc.loadFromCluster(options.env.PAR_IDENTITY_SA_ROOT ?? '');
      source = `in-cluster service account (${saDir})`;
    } else if (existsSync(home)) {
      kc.loadFromFile(home);
      source = home;
    } else {
      throw new KubernetesError(
        'KUBE_NOT_CONFIGURED',
        'no Kubernetes configuration found (no --kubeconfig, KUBECONFIG, kubernetes_kubeconfig_path, service account, or ~/.kube/config)',
        'Nothing was changed. Run inside the cluster agent Pod, or pass --kubeconfig PATH [--context NAME]. par-identity never falls back to http://localhost:8080.',
      );
    }
  } catch (err) {
    if (err instanceof KubernetesError) throw err;
    throw new KubernetesError('KUBE_NOT_CONFIGURED', `cannot load the Kubernetes configuration: ${(err as Error).message}`, 'Nothing was changed. Check the kubeconfig file.');
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) {
      throw new KubernetesError('KUBE_NOT_CONFIGURED', `context ${options.context} is not in ${source}`, `Nothing was changed. Pick one of: ${kc.getContexts().map((c) => c.name).join(', ') || '(none)'}.`);
    }
    kc.setCurrentContext(options.context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new KubernetesError('KUBE_NOT_CONFIGURED', `${source} has no current cluster`, 'Nothing was changed. Set a current context, or pass --context NAME.');
  }
  return { kc, source, server: cluster.server, ...(kc.getCurrentContext() ? { context: kc.getCurrentContext() } : {}) };
}

export async function coreApi(conn: KubeConnection): Promise<import('@kubernetes/client-node').CoreV1Api> {
  const k8s = await import('@kubernetes/client-node');
  return conn.kc.makeApiClient(k8s.CoreV1Api);
}
