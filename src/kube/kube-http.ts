import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { readBoundedBody } from '../http-body.js';
import { VERSION } from '../version.js';
import { type RequestLimits, requestSignal } from './kube-clients.js';
import type { KubeCluster, KubeExecConfig, KubeUser } from './kubeconfig.js';

// GET requests to the Kubernetes API over node:http(s), without @kubernetes/client-node: what `watch`
// needs (one list, one watch stream) costs no 4 MB library. Authentication and TLS are client-node's,
// rule for rule (KubeConfig.applySecurityAuthentication, applyHTTPSOptions, ExecAuth, FileAuth), so a
// kubeconfig connects the same way through either: bearer token (also from token-file), client
// certificate and key (files or data), exec credential plugins (cached until their expiry), the
// tokenFile auth provider of the in-cluster config (re-read every 60 s), basic auth, impersonation,
// certificate-authority(-data), tls-server-name, insecure-skip-tls-verify. What it does not do itself
// (the azure, gcp and oidc auth providers, custom authenticators, proxy-url) it asks client-node for,
// loading it then only.

/** Where and as whom: the current context's cluster and user entries of a kubeconfig. */
interface KubeHttpSource {
  cluster: KubeCluster;
  user?: KubeUser;
  /**
   * true (what par-identity resolves): certificates are verified unless the kubeconfig says
   * insecure-skip-tls-verify, whatever NODE_TLS_REJECT_UNAUTHORIZED says. false (a library caller's own
   * KubeConfig): client-node's default, rejectUnauthorized left to node unless the kubeconfig skips.
   */
  enforceTls: boolean;
  /** Per-request timeout and the command's remaining time. */
  limits: RequestLimits;
  /** The same cluster as a client-node KubeConfig, for what this module does not do itself. */
  clientNode(): Promise<KubeConfig>;
  /** A KubeConfig with custom authenticators: every request goes through client-node. */
  forceClientNode?: boolean;
}

/** The part of https.RequestOptions authentication sets. */
interface AuthOptions {
  headers: Record<string, string>;
  ca?: Buffer | string;
  cert?: Buffer | string;
  key?: Buffer | string;
  rejectUnauthorized?: boolean;
  servername?: string;
  agent?: RequestOptions['agent'];
  auth?: string;
}

interface ExecCredential {
  status: { token?: string; clientCertificateData?: string; clientKeyData?: string; expirationTimestamp?: string };
}

const FILE_TOKEN_REFRESH_MS = 60_000;
const MAX_ERROR_BODY = 64 * 1024;

/** client-node's bufferFromFileOrString: the file wins over the inline base64 data. */
function fileOrData(file: string | null | undefined, data: string | null | undefined): Buffer | undefined {
  if (file) return readFileSync(file);
  if (data) return Buffer.from(data, 'base64');
  return undefined;
}

/** Which of client-node's authenticators (in its order) takes this user; 'client-node' for those only it has. */
function authenticatorFor(user: KubeUser): 'exec' | 'file' | 'client-node' | undefined {
  const provider = user.authProvider;
  if (provider?.name === 'azure' || provider?.name === 'gcp') return 'client-node';
  if (user.exec || (provider && (provider.name === 'exec' || provider.config?.exec))) return 'exec';
  if (provider?.config?.tokenFile) return 'file';
  if (provider?.name === 'oidc') return 'client-node';
  return undefined;
}

/** fetch() strips leading and trailing HTTP whitespace from header values (a token file ending in a newline); node:http would refuse them. */
const headerValue = (value: string) => value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');

export class KubeHttp {
  private readonly agent: HttpAgent;
  private execCache: ExecCredential | undefined;
  private fileToken: { token: string; readAt: number } | undefined;

  constructor(private readonly source: KubeHttpSource) {
    // One pool for the list and the watch; TCP keep-alive probes after 30 s, as client-node's dispatcher.
    const options = { keepAlive: true, keepAliveMsecs: 30_000 };
    this.agent = source.cluster.server.startsWith('http:') ? new HttpAgent(options) : new HttpsAgent(options);
  }

  get server(): string {
    return this.source.cluster.server;
  }

  get limits(): RequestLimits {
    return this.source.limits;
  }

  /** Closes the idle connections kept for reuse. */
  close(): void {
    this.agent.destroy();
  }

  /**
   * GET `path` with `query` (empty values left out); resolves with the response once its headers
   * are in. The caller reads or discards the body; `signal` aborts the request at any time.
   */
  async get(path: string, query: Record<string, string | boolean | undefined>, signal: AbortSignal): Promise<IncomingMessage> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    const { cluster } = this.source;
    if (url.protocol === 'http:' && !cluster.skipTLSVerify) throw new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false');
    const auth = await this.authOptions();
    signal.throwIfAborted();
    const options: RequestOptions & Record<string, unknown> = { ...auth, method: 'GET', signal, headers: { Accept: 'application/json', 'User-Agent': `par-identity/${VERSION}`, ...auth.headers } };
    options.agent ??= this.agent;
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, options, resolve);
      req.once('error', reject);
      req.end();
    });
  }

  /** GET that reads a JSON answer, within the per-request timeout; a non-2xx answer throws { code, body } as client-node's ApiException. */
  async getJson(path: string, query: Record<string, string | boolean | undefined>): Promise<unknown> {
    const signal = requestSignal(this.source.limits);
    // An abort while the body streams surfaces as a socket error: report the abort's own reason.
    const aborted = (err: unknown) => (signal.aborted ? Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError' }) : err);
    try {
      const response = await this.get(path, query, signal);
      const status = response.statusCode ?? 0;
      if (status < 200 || status > 299) {
        const body = await readBoundedBody(response, MAX_ERROR_BODY).then(String, () => '');
        throw Object.assign(new Error(`HTTP ${status}`), { code: status, statusCode: status, body });
      }
      // Uncapped, as before: capping these answers is the Kubernetes client's part of issue 22.
      return JSON.parse((await readBoundedBody(response, Number.POSITIVE_INFINITY)).toString('utf8'));
    } catch (err) {
      throw aborted(err);
    }
  }

  /** Headers and TLS options of the next request (client-node's applySecurityAuthentication). */
  private async authOptions(): Promise<AuthOptions> {
    const { cluster, user } = this.source;
    if (this.source.forceClientNode || cluster.proxyUrl || (user && authenticatorFor(user) === 'client-node')) return this.clientNodeOptions();
    const out: AuthOptions = { headers: {} };
    // applyHTTPSOptions: nothing at all without a user, as in client-node.
    if (user) {
      if (cluster.skipTLSVerify) out.rejectUnauthorized = false;
      if (cluster.tlsServerName) out.servername = cluster.tlsServerName;
      const ca = fileOrData(cluster.caFile, cluster.caData);
      if (ca) out.ca = ca;
      const cert = fileOrData(user.certFile, user.certData);
      if (cert) out.cert = cert;
      const key = fileOrData(user.keyFile, user.keyData);
      if (key) out.key = key;
      if (user.impersonateUser != null) out.headers['Impersonate-User'] = user.impersonateUser;
      if (user.username) out.headers.Authorization = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
      const authenticator = authenticatorFor(user);
      if (authenticator === 'exec') {
        const credential = await this.execCredential(user);
        if (credential?.status.clientCertificateData) out.cert = credential.status.clientCertificateData;
        if (credential?.status.clientKeyData) out.key = credential.status.clientKeyData;
        if (credential?.status.token) out.headers.Authorization = `Bearer ${credential.status.token}`;
      } else if (authenticator === 'file') {
        const token = this.tokenFromFile(String(user.authProvider!.config!.tokenFile));
        if (token) out.headers.Authorization = `Bearer ${token}`;
      }
      if (user.token) out.headers.Authorization = `Bearer ${user.token}`;
    }
    this.enforce(out);
    for (const [k, v] of Object.entries(out.headers)) out.headers[k] = headerValue(v);
    return out;
  }

  /** Our TLS rule on top of client-node's: verify unless the kubeconfig itself skips verification. */
  private enforce(out: AuthOptions): void {
    if (this.source.enforceTls && !this.source.cluster.skipTLSVerify) out.rejectUnauthorized = true;
  }

  /** client-node builds the options (and, for proxy-url, the agent) itself. */
  private async clientNodeOptions(): Promise<AuthOptions> {
    const kc = await this.source.clientNode();
    const opts: AuthOptions & { headers?: Record<string, string> } = { headers: {} };
    await kc.applyToHTTPSOptions(opts as Parameters<KubeConfig['applyToHTTPSOptions']>[0]);
    // The KubeConfig par-identity builds enforces its TLS rule itself (enforceTlsVerification), agent included.
    return { ...opts, headers: Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k, headerValue(String(v))])) };
  }

  /** client-node's FileAuth: the token file is read again once the last read is over 60 s old. */
  private tokenFromFile(file: string): string {
    const now = Date.now();
    if (!this.fileToken || now - this.fileToken.readAt > FILE_TOKEN_REFRESH_MS) this.fileToken = { token: readFileSync(file).toString('utf-8'), readAt: now };
    return this.fileToken.token;
  }

  /** client-node's ExecAuth: the plugin's credential, reused until its expirationTimestamp (for ever without one). */
  private async execCredential(user: KubeUser): Promise<ExecCredential | null> {
    const cached = this.execCache;
    if (cached) {
      const expiry = cached.status.expirationTimestamp;
      if (!expiry || Date.parse(expiry) > Date.now()) return cached;
      this.execCache = undefined;
    }
    const exec: KubeExecConfig | undefined = user.exec ?? user.authProvider?.config?.exec;
    if (!exec) return null;
    if (!exec.command) throw new Error('No command was specified for exec authProvider!');
    const env = exec.env ? { ...process.env, ...Object.fromEntries(exec.env.map((e) => [e.name, e.value])) } : undefined;
    const credential = await new Promise<ExecCredential>((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      let failed: Error | undefined;
      const child = spawn(exec.command!, exec.args ?? [], env ? { env } : {});
      child.stdout.setEncoding('utf8');
      child.stderr.setEncoding('utf8');
      child.stdout.on('data', (d: string) => {
        stdout += d;
      });
      child.stderr.on('data', (d: string) => {
        stderr += d;
      });
      child.on('error', (err) => {
        failed = err;
      });
      child.on('close', (code) => {
        if (failed) reject(failed);
        else if (code !== 0) reject(new Error(stderr));
        else {
          try {
            resolve(JSON.parse(stdout) as ExecCredential);
          } catch (err) {
            reject(err);
          }
        }
      });
    });
    this.execCache = credential;
    return credential;
  }
}
