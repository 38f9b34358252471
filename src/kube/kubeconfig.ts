import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

// The kubeconfig as data, read without @kubernetes/client-node: `watch` resolves its cluster and
// talks to it without loading that library (about 4 MB of code, +50 MiB RSS), and every other command
// resolves through the same code. The parsing is client-node's own, line for line
// (config_types.js newClusters/newUsers/newContexts, KubeConfig.loadFromFile + makePathsAbsolute), with
// the same YAML parser (js-yaml, the version client-node uses), so a kubeconfig means the same thing to
// both; the objects have client-node's shapes, and KubeConfig.loadFromOptions() takes them as they are.

export interface KubeCluster {
  readonly name: string;
  readonly caData?: string;
  caFile?: string;
  readonly server: string;
  readonly tlsServerName?: string;
  readonly skipTLSVerify: boolean;
  readonly proxyUrl?: string;
}

/** An exec credential plugin (client.authentication.k8s.io), as written in the kubeconfig. */
export interface KubeExecConfig {
  command?: string;
  args?: string[];
  env?: Array<{ name: string; value: string }>;
  [key: string]: unknown;
}

interface KubeAuthProvider {
  name?: string;
  config?: { tokenFile?: string; exec?: KubeExecConfig; [key: string]: unknown };
}

export interface KubeUser {
  readonly name: string;
  readonly certData?: string | null;
  certFile?: string | null;
  readonly exec?: KubeExecConfig | null;
  readonly keyData?: string | null;
  keyFile?: string | null;
  readonly authProvider?: KubeAuthProvider | null;
  readonly token?: string;
  readonly username?: string | null;
  readonly password?: string | null;
  readonly impersonateUser?: string | null;
}

interface KubeContext {
  readonly cluster: string;
  readonly user?: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface KubeconfigData {
  clusters: KubeCluster[];
  users: KubeUser[];
  contexts: KubeContext[];
  currentContext: string;
}

// biome-ignore lint/suspicious/noExplicitAny: the YAML document is untyped, read as client-node reads it
type Raw = any;

function newClusters(a: Raw): KubeCluster[] {
  if (!Array.isArray(a)) return [];
  return a.map((elt: Raw, i: number) => {
    if (!elt.name) throw new Error(`clusters[${i}].name is missing`);
    if (!elt.cluster) throw new Error(`clusters[${i}].cluster is missing`);
    if (!elt.cluster.server) throw new Error(`clusters[${i}].cluster.server is missing`);
    return {
      caData: elt.cluster['certificate-authority-data'],
      caFile: elt.cluster['certificate-authority'],
      name: elt.name,
      server: elt.cluster.server.replace(/\/$/, ''),
      skipTLSVerify: elt.cluster['insecure-skip-tls-verify'] === true,
      tlsServerName: elt.cluster['tls-server-name'],
      proxyUrl: elt.cluster['proxy-url'],
    };
  });
}

function findToken(user: Raw): string | undefined {
  if (user) {
    if (user.token) return user.token;
    // Read now, relative to the working directory, as client-node does.
    if (user['token-file']) return readFileSync(user['token-file']).toString();
  }
  return undefined;
}

function newUsers(a: Raw): KubeUser[] {
  if (!Array.isArray(a)) return [];
  return a.map((elt: Raw, i: number) => {
    if (!elt.name) throw new Error(`users[${i}].name is missing`);
    return {
      authProvider: elt.user ? elt.user['auth-provider'] : null,
      certData: elt.user ? elt.user['client-certificate-data'] : null,
      certFile: elt.user ? elt.user['client-certificate'] : null,
      exec: elt.user ? elt.user.exec : null,
      keyData: elt.user ? elt.user['client-key-data'] : null,
      keyFile: elt.user ? elt.user['client-key'] : null,
      name: elt.name,
      token: findToken(elt.user),
      password: elt.user ? elt.user.password : null,
      username: elt.user ? elt.user.username : null,
      impersonateUser: elt.user ? elt.user.as : null,
    };
  });
}

function newContexts(a: Raw): KubeContext[] {
  if (!Array.isArray(a)) return [];
  return a.map((elt: Raw, i: number) => {
    if (!elt.name) throw new Error(`contexts[${i}].name is missing`);
    if (!elt.context) throw new Error(`contexts[${i}].context is missing`);
    if (!elt.context.cluster) throw new Error(`contexts[${i}].context.cluster is missing`);
    return { cluster: elt.context.cluster, name: elt.name, user: elt.context.user || undefined, namespace: elt.context.namespace || undefined };
  });
}

const absolute = (root: string, file: string) => (!root || isAbsolute(file) ? file : join(root, file));

/** One kubeconfig file, as KubeConfig.loadFromFile() reads it: certificate and key paths made absolute against its directory. */
export async function parseKubeconfigFile(file: string): Promise<KubeconfigData> {
  const { load } = await import('js-yaml');
  const obj = load(readFileSync(file).toString('utf-8')) as Raw;
  const data: KubeconfigData = { clusters: newClusters(obj.clusters), contexts: newContexts(obj.contexts), users: newUsers(obj.users), currentContext: obj['current-context'] };
  const root = dirname(file);
  for (const cluster of data.clusters) if (cluster.caFile) cluster.caFile = absolute(root, cluster.caFile);
  for (const user of data.users) {
    if (user.certFile) user.certFile = absolute(root, user.certFile);
    if (user.keyFile) user.keyFile = absolute(root, user.keyFile);
  }
  return data;
}

/** client-node's findObject: the entry of that name (the lists hold each name once after merging). */
export function findNamed<T extends { name: string }>(list: T[], name: string | undefined): T | undefined {
  return list.find((item) => item.name === name);
}
