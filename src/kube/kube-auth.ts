import { readFileSync } from 'node:fs';
import { KubernetesError } from '../errors.js';
import { holdSecret } from '../secrets-held.js';
import type { RequestLimits } from './kube-clients.js';
import { type ExecCredentialResult, runExecPlugin } from './kube-exec-plugin.js';
import type { KubeCluster, KubeUser } from './kubeconfig.js';
import { KubeconfigError } from './kubeconfig.js';

// Who a request is sent as, by kubectl's rules (client-go clientcmd client_config.go, transport
// round_trippers.go and transport.go, the exec and oidc providers; facts in docs/kubernetes-client.md),
// for every command: the typed API calls and `watch` alike.
// - Over http:// no credential is sent at all (only impersonation), as kubectl does.
// - token: the bearer token; with tokenFile beside it (or alone) the file is read again at most once a
//   minute, its content trimmed, and a failed re-read keeps the last token.
// - username/password: basic auth (refused next to a token).
// - client certificate and key, data before files; files read again at most once a minute.
// - exec plugin: only when there is no token, basic auth or client certificate; its credential is kept
//   until its expirationTimestamp, and a 401 answer makes the next request run it again.
// - auth-provider: gcp and azure were removed from kubectl and fail with kubectl's own words, naming
//   the exec plugin to use; oidc sends its id-token while it is valid (kubectl would then refresh it
//   through the identity provider and write it back into the kubeconfig: we say to use kubelogin).
// - as / as-uid / as-groups / as-user-extra: the Impersonate-* headers.
// - TLS: the CA (data before file), tls-server-name, insecure-skip-tls-verify; verification is never
//   left to NODE_TLS_REJECT_UNAUTHORIZED.

const FILE_REFRESH_MS = 60_000;
/** client-go refreshes a token a little before its period ends. */
const FILE_REFRESH_LEEWAY_MS = 10_000;
/** An OIDC id-token this close to its expiry counts as expired (client-go's expiryDelta). */
const OIDC_EXPIRY_DELTA_MS = 10_000;

/** The TLS options every connection to this cluster gets. */
interface ClusterTls {
  ca?: Buffer;
  rejectUnauthorized: boolean;
  servername?: string;
}

/** What one request carries: headers, and the client certificate of its connection. */
export interface RequestCredentials {
  headers: Record<string, string | string[]>;
  cert?: Buffer | string;
  key?: Buffer | string;
  /** The exec credential used (so that a 401 refreshes exactly that one). */
  readonly exec?: ExecCredentialResult;
}

interface KubeAuthOptions {
  env: NodeJS.ProcessEnv;
  /** Our stdin is a terminal (an exec plugin may then be interactive). */
  stdinIsTerminal?: boolean;
  /** The connection's limits: their deadline, when there is one, is read when a plugin runs (a rollout hands it over, src/kube/kube-clients.ts). */
  limits?: Pick<RequestLimits, 'deadline'>;
  now?: () => number;
}

/** A file's content, read again once it is older than a minute (client-go's cached file token source). */
class RereadFile {
  private value: Buffer;
  private readAt: number;

  constructor(
    private readonly path: string,
    private readonly now: () => number,
    initial?: Buffer,
  ) {
    this.value = initial ?? readFileSync(path);
    this.readAt = now();
  }

  get(): Buffer {
    const now = this.now();
    if (now - this.readAt > FILE_REFRESH_MS - FILE_REFRESH_LEEWAY_MS) {
      try {
        this.value = readFileSync(this.path);
      } catch {
        // client-go keeps the token it has when a refresh fails.
      }
      this.readAt = now;
    }
    return this.value;
  }
}

const REMOVED_PROVIDERS: Record<string, string> = {
  gcp:
    'The gcp auth plugin has been removed.\n' +
    'Please use the "gke-gcloud-auth-plugin" kubectl/client-go credential plugin instead.\n' +
    'See https://cloud.google.com/blog/products/containers-kubernetes/kubectl-auth-changes-in-gke for further details',
  azure:
    'The azure auth plugin has been removed.\n' +
    'Please use the https://github.com/Azure/kubelogin kubectl/client-go credential plugin instead.\n' +
    'See https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins for further details',
};

/** What a header value may hold (RFC 9110 field-value: visible ASCII, space, tab and obs-text). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** client-go headerKeyEscape: bytes outside the URL-unreserved and header-token sets are %-encoded. */
function headerKeyEscape(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~!#$&'*+^`|]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Reads a file kubectl would read when building its client, with kubectl's complaint when it cannot. */
function readConfigFile(path: string, what: string, owner: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new KubeconfigError(`unable to read ${what} ${path} for ${owner} due to ${(err as Error).message}`);
  }
}

function oidcExpiredAt(idToken: string): number | undefined {
  const parts = idToken.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

function credentialsError(message: string, hint: string): KubernetesError {
  return new KubernetesError('KUBE_CREDENTIALS', message, `Nothing was changed. ${hint}`);
}

/**
 * The credentials of one cluster and user. The constructor does what kubectl does before its first
 * request (reads the CA, certificate and key files and the token file, refuses a removed
 * auth-provider) and throws KubeconfigError; credentials() is called before each request.
 */
export class KubeAuth {
  readonly tls: ClusterTls;
  private readonly secure: boolean;
  private readonly now: () => number;
  private readonly tokenFile?: RereadFile;
  private readonly certFile?: RereadFile;
  private readonly keyFile?: RereadFile;
  private readonly staticCert?: { cert: Buffer; key: Buffer };
  private readonly caData?: Buffer;
  private exec?: ExecCredentialResult;
  private execRun?: Promise<ExecCredentialResult>;

  constructor(
    private readonly cluster: KubeCluster,
    private readonly user: KubeUser | undefined,
    private readonly options: KubeAuthOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.secure = !cluster.server.startsWith('http://');
    this.caData =
      cluster.certificateAuthorityData ??
      (cluster.certificateAuthority ? readConfigFile(cluster.certificateAuthority, 'certificate-authority', cluster.name) : undefined);
    this.tls = {
      ...(this.caData ? { ca: this.caData } : {}),
      rejectUnauthorized: !cluster.insecureSkipTlsVerify,
      ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
    };
    if (!user || !this.secure) return;
    const provider = user.authProvider;
    if (provider) {
      const removed = REMOVED_PROVIDERS[provider.name];
      if (removed) throw new KubeconfigError(removed);
      if (provider.name !== 'oidc') throw new KubeconfigError(`no Auth Provider found for name "${provider.name}"`);
    }
    if (user.clientCertificate || user.clientCertificateData) {
      if (user.clientCertificate) readConfigFile(user.clientCertificate, 'client-cert', user.name);
      if (user.clientKey) readConfigFile(user.clientKey, 'client-key', user.name);
      if (user.clientCertificateData && user.clientKeyData) this.staticCert = { cert: user.clientCertificateData, key: user.clientKeyData };
      else {
        if (user.clientCertificate && !user.clientCertificateData) this.certFile = new RereadFile(user.clientCertificate, this.now);
        if (user.clientKey && !user.clientKeyData) this.keyFile = new RereadFile(user.clientKey, this.now);
      }
    }
    if (user.tokenFile) {
      // Without a token the file must be readable now; beside a token it wins whenever it can be read.
      let initial: Buffer;
      try {
        initial = readFileSync(user.tokenFile);
      } catch (err) {
        if (!user.token) throw new KubeconfigError((err as Error).message);
        initial = Buffer.from(user.token);
      }
      this.tokenFile = new RereadFile(user.tokenFile, this.now, initial);
    }
  }

  /** The exec plugin runs only when nothing else identifies the user (client-go UpdateTransportConfig). */
  private get usesExec(): boolean {
    const user = this.user;
    return (
      !!user?.exec &&
      this.secure &&
      !user.token &&
      !user.tokenFile &&
      !user.username &&
      !user.password &&
      !user.clientCertificate &&
      !user.clientCertificateData
    );
  }

  private bearer(): string | undefined {
    const user = this.user!;
    if (this.tokenFile) {
      const token = this.tokenFile.get().toString('utf8').trim();
      return token || user.token;
    }
    return user.token;
  }

  private async execCredential(): Promise<ExecCredentialResult> {
    const cached = this.exec;
    if (cached && (cached.expiresAt === undefined || this.now() <= cached.expiresAt)) return cached;
    // One plugin run for every request waiting on it (client-go holds a mutex while it runs).
    this.execRun ??= runExecPlugin(this.user!.exec!, this.cluster, this.caData, {
      env: this.options.env,
      stdinIsTerminal: this.options.stdinIsTerminal ?? false,
      ...(this.options.limits?.deadline ? { deadline: this.options.limits.deadline } : {}),
    }).finally(() => {
      this.execRun = undefined;
    });
    this.exec = await this.execRun;
    return this.exec;
  }

  private oidcToken(): string {
    const config = this.user!.authProvider!.config;
    const idToken = config['id-token'] ?? '';
    const expiresAt = idToken ? oidcExpiredAt(idToken) : undefined;
    if (!idToken || (expiresAt !== undefined && this.now() + OIDC_EXPIRY_DELTA_MS > expiresAt)) {
      throw credentialsError(
        `the kubeconfig user ${this.user!.name} uses the oidc auth-provider and its id-token ${idToken ? 'has expired' : 'is missing'}`,
        'kubectl would refresh it from the identity provider and write it back into the kubeconfig; par-identity does not. ' +
          'Use the exec plugin kubelogin (`kubectl oidc-login get-token`, https://github.com/int128/kubelogin) ' +
          'in the kubeconfig instead, or refresh the token with kubectl first.',
      );
    }
    if (expiresAt === undefined)
      throw credentialsError(
        `the kubeconfig user ${this.user!.name} has an oidc id-token that is not a JWT`,
        'Refresh it (e.g. with kubectl), or use the exec plugin kubelogin instead.',
      );
    return idToken;
  }

  /** Headers and client certificate for the next request; every secret in them is held (secrets-held.ts). */
  async credentials(): Promise<RequestCredentials> {
    const out = await this.credentialsUnheld();
    const auth = out.headers.Authorization;
    if (typeof auth === 'string') {
      holdSecret(auth.startsWith('Basic ') ? 'basic credentials' : 'bearer token', auth.replace(/^(Bearer|Basic) /, ''));
      if (auth.startsWith('Basic ')) holdSecret('password', this.user?.password);
    }
    holdSecret('client key', out.key);
    // A value HTTP cannot carry (a token holding ESC or a line break) is the credential's fault, not
    // the network's: said as such, the value never shown (docs/output.md, KUBE_CREDENTIALS).
    for (const [name, value] of Object.entries(out.headers)) {
      if ([value].flat().some((v) => !HEADER_VALUE.test(v))) {
        const what =
          name === 'Authorization'
            ? typeof auth === 'string' && auth.startsWith('Basic ')
              ? 'username or password'
              : 'bearer token'
            : `impersonation value (${name})`;
        throw credentialsError(
          `the ${what} of the kubeconfig user ${this.user?.name ?? '(none)'} holds a control character ` +
            'that an HTTP header cannot carry; it was not sent (the value is not printed)',
          'Fix the token (the kubeconfig token or tokenFile, the service-account token, or what the exec plugin prints) ' +
            'or the impersonation setting; a stray escape sequence or line break is the usual cause.',
        );
      }
    }
    return out;
  }

  private async credentialsUnheld(): Promise<RequestCredentials> {
    const user = this.user;
    const headers: Record<string, string | string[]> = {};
    if (!user) return { headers };
    const out: { headers: Record<string, string | string[]>; cert?: Buffer | string; key?: Buffer | string; exec?: ExecCredentialResult } =
      { headers };
    if (this.secure) {
      if (this.staticCert) {
        out.cert = this.staticCert.cert;
        out.key = this.staticCert.key;
      } else if (this.certFile || this.keyFile) {
        out.cert = this.certFile?.get() ?? user.clientCertificateData!;
        out.key = this.keyFile?.get() ?? user.clientKeyData!;
      }
      const token = this.bearer();
      if (token) headers.Authorization = `Bearer ${token}`;
      else if (user.username || user.password)
        headers.Authorization = `Basic ${Buffer.from(`${user.username ?? ''}:${user.password ?? ''}`).toString('base64')}`;
      else if (this.usesExec) {
        const credential = await this.execCredential();
        out.exec = credential;
        if (credential.token) headers.Authorization = `Bearer ${credential.token}`;
        if (credential.cert) {
          out.cert = credential.cert;
          out.key = credential.key;
        }
      } else if (user.authProvider?.name === 'oidc') headers.Authorization = `Bearer ${this.oidcToken()}`;
    }
    if (user.impersonate) {
      headers['Impersonate-User'] = user.impersonate;
      if (user.impersonateUid) headers['Impersonate-Uid'] = user.impersonateUid;
      if (user.impersonateGroups.length > 0) headers['Impersonate-Group'] = [...user.impersonateGroups];
      for (const [key, values] of Object.entries(user.impersonateUserExtra))
        if (values.length > 0) headers[`Impersonate-Extra-${headerKeyEscape(key)}`] = [...values];
    }
    return out;
  }

  /** The server answered 401 to a request sent with `used`: its exec credential is not reused (client-go maybeRefreshCreds). */
  unauthorized(used: RequestCredentials): void {
    if (used.exec && used.exec === this.exec) this.exec = undefined;
  }

  /** The user has nothing that identifies it (kubectl would ask for a username and password). */
  get anonymous(): boolean {
    const u = this.user;
    return (
      !u ||
      !(u.token || u.tokenFile || u.username || u.password || u.clientCertificate || u.clientCertificateData || u.exec || u.authProvider)
    );
  }
}
