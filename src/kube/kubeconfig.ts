import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { commonJs } from '../lazy-module.js';

// A kubeconfig file read as kubectl reads it (client-go clientcmd: Load, the v1 Config types and their
// conversion, ResolveLocalPaths), facts in docs/kubernetes-client.md:
// - YAML 1.1 (kubectl converts with go-yaml v2, so `yes`/`on` are booleans), the first document only,
//   a key given twice keeps its last value; then every known field must have its JSON type (a number
//   where a string belongs is an error, as in kubectl), unknown fields are ignored, names are
//   case-sensitive, and a null is an absent field.
// - *-data fields are base64 (strict padding), decoded here.
// - A name given twice in one list is an error.
// - Relative paths (certificate-authority, client-certificate, client-key, tokenFile, and an exec
//   command containing a path separator) are made absolute against the file's folder.
// Nothing here reads a certificate, key or token file: that is the auth path's (kube-auth.ts).

export interface KubeCluster {
  readonly name: string;
  /** As written (a trailing slash dropped); kubectl-style defaults for a missing scheme come from kubeServerUrl(). */
  readonly server: string;
  readonly certificateAuthority?: string;
  readonly certificateAuthorityData?: Buffer;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
  readonly disableCompression: boolean;
  /** extensions[].name → extension; the exec plugin's cluster info carries client.authentication.k8s.io/exec. */
  readonly extensions: Readonly<Record<string, unknown>>;
  /** Keys kubectl does not read (a typo, or another client's key): ignored, and said. */
  readonly ignoredKeys: readonly string[];
}

type ExecInteractiveMode = 'Never' | 'IfAvailable' | 'Always';

/** An exec credential plugin (client.authentication.k8s.io), as written in the kubeconfig. */
export interface KubeExecConfig {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: ReadonlyArray<{ name: string; value: string }>;
  readonly apiVersion: string;
  readonly installHint: string;
  readonly provideClusterInfo: boolean;
  /** As written ('' when left out, which v1 forbids; v1beta1 defaults it to IfAvailable); checked by confirmUsable(). */
  readonly interactiveMode: string;
}

interface KubeAuthProvider {
  readonly name: string;
  readonly config: Readonly<Record<string, string>>;
}

export interface KubeUser {
  readonly name: string;
  readonly clientCertificate?: string;
  readonly clientCertificateData?: Buffer;
  readonly clientKey?: string;
  readonly clientKeyData?: Buffer;
  readonly token?: string;
  readonly tokenFile?: string;
  /** `as`, `as-uid`, `as-groups`, `as-user-extra`. */
  readonly impersonate?: string;
  readonly impersonateUid?: string;
  readonly impersonateGroups: readonly string[];
  readonly impersonateUserExtra: Readonly<Record<string, readonly string[]>>;
  readonly username?: string;
  readonly password?: string;
  readonly authProvider?: KubeAuthProvider;
  readonly exec?: KubeExecConfig;
  /** Keys kubectl does not read (e.g. client-node's token-file): ignored, and said. */
  readonly ignoredKeys: readonly string[];
}

interface KubeContext {
  readonly name: string;
  readonly cluster: string;
  readonly user: string;
  readonly namespace?: string;
}

export interface KubeconfigData {
  clusters: KubeCluster[];
  users: KubeUser[];
  contexts: KubeContext[];
  currentContext: string;
}

/** An empty kubeconfig (kubectl reads an empty file as one). */
const empty = (): KubeconfigData => ({ clusters: [], users: [], contexts: [], currentContext: '' });

/** A kubeconfig kubectl would refuse to load; the message names the field. */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

type Json = unknown;
const isMap = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const typeName = (v: Json): string => (Array.isArray(v) ? 'array' : v instanceof Date ? 'timestamp' : isMap(v) ? 'object' : typeof v);

/** One field as Go's encoding/json reads it into a typed struct field (null or absent: undefined). */
class Fields {
  constructor(
    private readonly obj: Record<string, Json>,
    private readonly at: string,
  ) {}

  private wrong(key: string, want: string): never {
    throw new KubeconfigError(`${this.at}.${key} must be ${want}, not ${typeName(this.obj[key])}`);
  }

  private value(key: string): Json {
    const v = Object.hasOwn(this.obj, key) ? this.obj[key] : undefined;
    return v === null ? undefined : v;
  }

  string(key: string): string | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'string') this.wrong(key, 'a string');
    return v;
  }

  bool(key: string): boolean {
    const v = this.value(key);
    if (v === undefined) return false;
    if (typeof v !== 'boolean') this.wrong(key, 'true or false');
    return v;
  }

  strings(key: string): string[] {
    const v = this.value(key);
    if (v === undefined) return [];
    if (!Array.isArray(v)) this.wrong(key, 'a list of strings');
    return v.map((item, i) => {
      if (typeof item !== 'string') throw new KubeconfigError(`${this.at}.${key}[${i}] must be a string, not ${typeName(item)}`);
      return item;
    });
  }

  /** []byte in Go's JSON: standard base64 with its padding (line breaks ignored). */
  bytes(key: string): Buffer | undefined {
    const v = this.string(key);
    if (v === undefined || v === '') return undefined;
    const text = v.replace(/[\r\n]/g, '');
    if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new KubeconfigError(`${this.at}.${key} is not valid base64`);
    return Buffer.from(text, 'base64');
  }

  map(key: string): Fields | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (!isMap(v)) this.wrong(key, 'an object');
    return new Fields(v, `${this.at}.${key}`);
  }

  list(key: string): Fields[] {
    const v = this.value(key);
    if (v === undefined) return [];
    if (!Array.isArray(v)) this.wrong(key, 'a list');
    return v.map((item, i) => {
      if (item === null) return new Fields({}, `${this.at}.${key}[${i}]`);
      if (!isMap(item)) throw new KubeconfigError(`${this.at}.${key}[${i}] must be an object, not ${typeName(item)}`);
      return new Fields(item, `${this.at}.${key}[${i}]`);
    });
  }

  stringMap(key: string): Record<string, string> {
    const m = this.map(key);
    if (!m) return {};
    return Object.fromEntries(m.keys().map((k) => [k, m.string(k) ?? '']));
  }

  stringsMap(key: string): Record<string, string[]> {
    const m = this.map(key);
    if (!m) return {};
    return Object.fromEntries(m.keys().map((k) => [k, m.strings(k)]));
  }

  raw(key: string): Json {
    return this.value(key);
  }

  keys(): string[] {
    return Object.keys(this.obj);
  }
}

const CLUSTER_KEYS = new Set([
  'server',
  'tls-server-name',
  'insecure-skip-tls-verify',
  'certificate-authority',
  'certificate-authority-data',
  'proxy-url',
  'disable-compression',
  'extensions',
]);
const USER_KEYS = new Set([
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'token',
  'tokenFile',
  'as',
  'as-uid',
  'as-groups',
  'as-user-extra',
  'username',
  'password',
  'auth-provider',
  'exec',
  'extensions',
]);

const INTERACTIVE_MODES = new Set<string>(['Never', 'IfAvailable', 'Always'] satisfies ExecInteractiveMode[]);
/** The ExecCredential versions kubectl still speaks. */
const EXEC_API_VERSIONS = new Set(['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']);
const LEGACY_EXEC_VERSIONS = new Set(['client.authentication.k8s.io/v1beta1', 'client.authentication.k8s.io/v1alpha1']);

function readExec(f: Fields, root: string): KubeExecConfig {
  const apiVersion = f.string('apiVersion') ?? '';
  let interactiveMode = f.string('interactiveMode') ?? '';
  // The v1beta1 default (SetDefaults_ExecConfig); v1 must say it.
  if (interactiveMode === '' && LEGACY_EXEC_VERSIONS.has(apiVersion)) interactiveMode = 'IfAvailable';
  const command = f.string('command') ?? '';
  return {
    // A command with a path separator is a file relative to the kubeconfig; a bare name is looked up on PATH.
    command: command.includes(sep) ? absolute(root, command) : command,
    args: f.strings('args'),
    env: f.list('env').map((e) => ({ name: e.string('name') ?? '', value: e.string('value') ?? '' })),
    apiVersion,
    installHint: f.string('installHint') ?? '',
    provideClusterInfo: f.bool('provideClusterInfo'),
    interactiveMode,
  };
}

const absolute = (root: string, file: string) => (isAbsolute(file) ? file : join(root, file));
const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  value === undefined || value === '' ? {} : ({ [key]: value } as { [P in K]?: V });

/** Names are map keys in client-go: the same name twice in one list is an error. */
function uniqueNames<T extends { name: string }>(items: T[], list: string): T[] {
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.name)) throw new KubeconfigError(`${list}: the name "${item.name}" is defined twice`);
    seen.add(item.name);
  }
  return items;
}

/** Parses kubeconfig text of a file in `root` (its folder, for relative paths). */
// exported for tests: YAML 1.1 typing checked on text, without files
export async function parseKubeconfig(text: string, root: string): Promise<KubeconfigData> {
  if (text.replace(/^\uFEFF/, '').trim() === '') return empty();
  const yaml = commonJs(await import('yaml'));
  // go-yaml v2, as kubectl uses it: YAML 1.1 scalars, but timestamps stay strings (they only become
  // times in a time-typed field, and no kubeconfig field is one); a repeated key keeps its last value.
  const docs = yaml.parseAllDocuments(text, {
    version: '1.1',
    uniqueKeys: false,
    customTags: (tags) => tags.filter((t) => (t as { tag?: string }).tag !== 'tag:yaml.org,2002:timestamp'),
  });
  const first = Array.isArray(docs) ? docs[0] : docs;
  if (!first) return empty();
  if (first.errors.length > 0) throw new KubeconfigError(`not valid YAML: ${first.errors[0]!.message.split('\n')[0]}`);
  const doc = first.toJS({ maxAliasCount: 1000 }) as Json;
  if (doc === null || doc === undefined) return empty();
  if (!isMap(doc)) throw new KubeconfigError(`the file must hold a mapping, not ${typeName(doc)}`);
  const top = new Fields(doc, 'kubeconfig');
  const clusters = top.list('clusters').map((entry): KubeCluster => {
    const c = entry.map('cluster') ?? new Fields({}, 'cluster');
    const ca = c.string('certificate-authority');
    return {
      name: entry.string('name') ?? '',
      server: c.string('server') ?? '',
      ...optional('certificateAuthority', ca ? absolute(root, ca) : undefined),
      ...optional('certificateAuthorityData', c.bytes('certificate-authority-data')),
      insecureSkipTlsVerify: c.bool('insecure-skip-tls-verify'),
      ...optional('tlsServerName', c.string('tls-server-name')),
      ...optional('proxyUrl', c.string('proxy-url')),
      disableCompression: c.bool('disable-compression'),
      extensions: Object.fromEntries(c.list('extensions').map((e) => [e.string('name') ?? '', e.raw('extension')])),
      ignoredKeys: c.keys().filter((k) => !CLUSTER_KEYS.has(k)),
    };
  });
  const users = top.list('users').map((entry): KubeUser => {
    const u = entry.map('user') ?? new Fields({}, 'user');
    const file = (key: string) => {
      const v = u.string(key);
      return v ? absolute(root, v) : undefined;
    };
    const provider = u.map('auth-provider');
    const exec = u.map('exec');
    return {
      name: entry.string('name') ?? '',
      ...optional('clientCertificate', file('client-certificate')),
      ...optional('clientCertificateData', u.bytes('client-certificate-data')),
      ...optional('clientKey', file('client-key')),
      ...optional('clientKeyData', u.bytes('client-key-data')),
      ...optional('token', u.string('token')),
      ...optional('tokenFile', file('tokenFile')),
      ...optional('impersonate', u.string('as')),
      ...optional('impersonateUid', u.string('as-uid')),
      impersonateGroups: u.strings('as-groups'),
      impersonateUserExtra: u.stringsMap('as-user-extra'),
      ...optional('username', u.string('username')),
      ...optional('password', u.string('password')),
      ...(provider ? { authProvider: { name: provider.string('name') ?? '', config: provider.stringMap('config') } } : {}),
      ...(exec ? { exec: readExec(exec, root) } : {}),
      ignoredKeys: u.keys().filter((k) => !USER_KEYS.has(k)),
    };
  });
  const contexts = top.list('contexts').map((entry): KubeContext => {
    const c = entry.map('context') ?? new Fields({}, 'context');
    return {
      name: entry.string('name') ?? '',
      cluster: c.string('cluster') ?? '',
      user: c.string('user') ?? '',
      ...optional('namespace', c.string('namespace')),
    };
  });
  return {
    clusters: uniqueNames(clusters, 'clusters'),
    users: uniqueNames(users, 'users'),
    contexts: uniqueNames(contexts, 'contexts'),
    currentContext: top.string('current-context') ?? '',
  };
}

/** One kubeconfig file; relative paths inside it resolve against its (absolute) folder. */
export async function parseKubeconfigFile(file: string): Promise<KubeconfigData> {
  return parseKubeconfig(readFileSync(file, 'utf8'), dirname(resolve(file)));
}

/** The entry of that name (the lists hold each name once after merging). */
export function findNamed<T extends { name: string }>(list: readonly T[], name: string | undefined): T | undefined {
  return list.find((item) => item.name === name);
}

/** Schemes kubectl accepts in proxy-url. */
const PROXY_SCHEMES = new Set(['http:', 'https:', 'socks5:']);

/**
 * kubectl's checks of the context it is about to use (clientcmd validation.go ConfirmUsable, the
 * transport's own checks, and the exec plugin's apiVersion): the messages are kubectl's, each one a
 * reason kubectl refuses to send anything. Returns them all; none is fine.
 */
export function confirmUsable(cluster: KubeCluster, user: KubeUser | undefined): string[] {
  const errors: string[] = [];
  if (!cluster.server) errors.push(`no server found for cluster "${cluster.name}"`);
  if (cluster.proxyUrl) {
    // kubectl quotes the whole URL; its user and password are left out here (errors reach logs and --json).
    const shown = cluster.proxyUrl.replace(/\/\/[^/@]*@/, '//…@');
    let scheme: string | undefined;
    try {
      scheme = new URL(cluster.proxyUrl).protocol;
    } catch {
      errors.push(`invalid 'proxy-url' "${shown}" for cluster "${cluster.name}": not a URL`);
    }
    if (scheme && !PROXY_SCHEMES.has(scheme))
      errors.push(
        `invalid 'proxy-url' "${shown}" for cluster "${cluster.name}": unsupported scheme "${scheme.slice(0, -1)}", must be http, https, or socks5`,
      );
  }
  if (cluster.certificateAuthority && cluster.certificateAuthorityData)
    errors.push(
      `certificate-authority-data and certificate-authority are both specified for ${cluster.name}. certificate-authority-data will override.`,
    );
  if ((cluster.certificateAuthority || cluster.certificateAuthorityData) && cluster.insecureSkipTlsVerify)
    errors.push('specifying a root certificates file with the insecure flag is not allowed');
  if (!user) return errors;
  const methods = [...(user.token ? ['token'] : []), ...(user.username || user.password ? ['basicAuth'] : [])];
  if (methods.length > 1)
    errors.push(`more than one authentication method found for ${user.name}; found [${methods.join(' ')}], only one is allowed`);
  if (user.clientCertificate || user.clientCertificateData) {
    if (user.clientCertificate && user.clientCertificateData)
      errors.push(`client-cert-data and client-cert are both specified for ${user.name}. client-cert-data will override.`);
    if (user.clientKey && user.clientKeyData)
      errors.push(`client-key-data and client-key are both specified for ${user.name}; client-key-data will override`);
    if (!user.clientKey && !user.clientKeyData)
      errors.push(`client-key-data or client-key must be specified for ${user.name} to use the clientCert authentication method.`);
  }
  if (user.exec) {
    const exec = user.exec;
    if (user.authProvider) errors.push(`authProvider cannot be provided in combination with an exec plugin for ${user.name}`);
    if (!exec.command) errors.push(`command must be specified for ${user.name} to use exec authentication plugin`);
    if (!exec.apiVersion) errors.push(`apiVersion must be specified for ${user.name} to use exec authentication plugin`);
    else if (!EXEC_API_VERSIONS.has(exec.apiVersion)) errors.push(`exec plugin: invalid apiVersion "${exec.apiVersion}"`);
    if (exec.env.some((e) => !e.name))
      errors.push(`env variable name must be specified for ${user.name} to use exec authentication plugin`);
    if (exec.interactiveMode === '') errors.push(`interactiveMode must be specified for ${user.name} to use exec authentication plugin`);
    else if (!INTERACTIVE_MODES.has(exec.interactiveMode))
      errors.push(`invalid interactiveMode for ${user.name}: "${exec.interactiveMode}"`);
  }
  if (
    (user.impersonateUid || user.impersonateGroups.length > 0 || Object.keys(user.impersonateUserExtra).length > 0) &&
    !user.impersonate
  ) {
    errors.push(`requesting uid, groups or user-extra for ${user.name} without impersonating a user`);
  }
  return errors;
}
