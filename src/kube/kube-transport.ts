import {
  Agent as HttpAgent,
  type AgentOptions,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request as httpRequest,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { readBoundedBody, ResponseTooLargeError } from '../http-body.js';
import { VERSION } from '../version.js';
import { KubeAuth, type RequestCredentials } from './kube-auth.js';
import { type RequestLimits, requestSignal } from './kube-clients.js';
import { KubeApiStatus } from './kube-errors.js';
import { tunnel } from '../net/proxy-tunnel.js';
import { type ProxyChoice, proxyFor } from './kube-proxy.js';
import { type KubeCluster, KubeconfigError, type KubeUser } from './kubeconfig.js';
import { quotedServerValue } from '../sanitize.js';

// THE way par-identity talks to a Kubernetes API server, for every command (typed API calls through
// client-node's generated classes, kube-clients.ts, and `watch`'s list and watch): one keep-alive
// connection pool per cluster, kubectl's authentication (kube-auth.ts) and proxies (kube-proxy.ts, through src/net/proxy-tunnel.ts),
// and a size cap on every answer read into memory. docs/kubernetes-client.md says why it is ours and
// not client-node's.

/** The most of one answer read into memory (a list of every Secret of a large cluster fits). */
const MAX_RESPONSE_BYTES = 128 * 1024 * 1024;
/** What is kept of an error answer (a Status object is well under 1 KiB). */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

interface KubeRequest {
  method: string;
  /** A path with its query (`/api/v1/...?...`), or a full URL on the server. */
  path: string;
  query?: Record<string, string | boolean | undefined>;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal: AbortSignal;
}

interface BufferedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

interface KubeTransportOptions {
  cluster: KubeCluster;
  user?: KubeUser;
  env: NodeJS.ProcessEnv;
  limits: RequestLimits;
  stdinIsTerminal?: boolean;
  /** The cap of an answer read into memory; MAX_RESPONSE_BYTES unless a test asks for less. */
  maxResponseBytes?: number;
}

/**
 * The server as kubectl reads it (client-go DefaultServerURL): no scheme means https when the
 * cluster has a CA or skips verification or the user has a client certificate, else http; a path
 * prefix is kept, a trailing slash is not.
 */
// exported for tests: client-go's DefaultServerURL forms, checked without a connection
export function kubeServerUrl(cluster: KubeCluster, user?: KubeUser): URL {
  let text = cluster.server;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    const tls = !!(
      cluster.certificateAuthority ||
      cluster.certificateAuthorityData ||
      cluster.insecureSkipTlsVerify ||
      user?.clientCertificate ||
      user?.clientCertificateData
    );
    text = `${tls ? 'https' : 'http'}://${text}`;
  }
  // A value no request can go to is the kubeconfig's fault, named as such (never "unreachable", never
  // a crash); its user and password, if any, are left out of the message.
  const refuse = (why: string) => {
    const shown = quotedServerValue(cluster.server.replace(/\/\/[^/@]*@/, '//…@'), 200);
    return new KubeconfigError(`the server ${shown} of cluster "${cluster.name}" ${why}`);
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('is not a valid URL (a port must be 1-65535, an IPv6 address goes in brackets: https://[::1]:6443)');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw refuse(`has the scheme "${url.protocol.slice(0, -1)}"; a Kubernetes API server is https:// (or http://)`);
  if (url.port === '0') throw refuse('has port 0, which no server listens on');
  if (!url.hostname) throw refuse('names no host');
  url.pathname = url.pathname.replace(/\/+$/, '');
  url.search = '';
  url.hash = '';
  return url;
}

/** An agent whose connections go through a proxy: tunnel first, then TLS to the API server over it. */
function proxiedAgent(secure: boolean, proxy: URL, proxyTls: ConnectionOptions, options: AgentOptions): HttpAgent {
  const Base = secure ? HttpsAgent : HttpAgent;
  const agent = new Base(options);
  (
    agent as unknown as {
      createConnection: (o: RequestOptions & ConnectionOptions, cb: (err: Error | null, s?: Duplex) => void) => undefined;
    }
  ).createConnection = (o, cb) => {
    const host = String(o.host ?? o.hostname ?? '').replace(/^\[|\]$/g, '');
    const port = Number(o.port);
    tunnel(proxy, host, port, proxyTls).then(
      (socket) => {
        // The tunnel is left paused; plain HTTP reads it through 'data' events (nothing comes before our request).
        if (!secure) return cb(null, socket.resume());
        const tls = tlsConnect({
          ...o,
          socket,
          host,
          servername: o.servername || (host.includes(':') || /^\d+\.\d+\.\d+\.\d+$/.test(host) ? '' : host),
        } as ConnectionOptions);
        cb(null, tls);
      },
      (err: Error) => cb(err),
    );
    return undefined;
  };
  return agent;
}

export class KubeTransport {
  readonly server: URL;
  readonly proxy: ProxyChoice | undefined;
  readonly limits: RequestLimits;
  private readonly maxResponseBytes: number;
  private readonly auth: KubeAuth;
  private readonly agent: HttpAgent;
  private readonly secure: boolean;
  /** The server URL without its trailing slash, for appending paths. */
  readonly baseUrl: string;

  /** Throws KubeconfigError for what kubectl refuses before sending (unreadable files, removed auth providers). */
  constructor(options: KubeTransportOptions) {
    this.server = kubeServerUrl(options.cluster, options.user);
    this.baseUrl = this.server.href.replace(/\/$/, '');
    this.secure = this.server.protocol === 'https:';
    this.limits = options.limits;
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.auth = new KubeAuth(options.cluster, options.user, {
      env: options.env,
      ...(options.stdinIsTerminal !== undefined ? { stdinIsTerminal: options.stdinIsTerminal } : {}),
      limits: options.limits,
    });
    this.proxy = proxyFor(this.server, options.cluster.proxyUrl, options.env);
    // TCP keep-alive probes after 30 s, as client-go's dialer.
    const agentOptions: AgentOptions = { keepAlive: true, keepAliveMsecs: 30_000 };
    this.agent = this.proxy
      ? proxiedAgent(this.secure, this.proxy.url, this.auth.tls, agentOptions)
      : this.secure
        ? new HttpsAgent(agentOptions)
        : new HttpAgent(agentOptions);
  }

  /** No user credential at all (kubectl would prompt for a username and password). */
  get anonymous(): boolean {
    return this.auth.anonymous;
  }

  /** Closes the idle connections kept for reuse. */
  close(): void {
    this.agent.destroy();
  }

  /**
   * Closes the idle pooled connections only, so that the next request opens a new one: after a 5xx or
   * a reset the server may be closing the connection it answered on, and a read sent on it would fail
   * for that alone (docs/safety.md, outcome unknown). Requests under way are left alone.
   */
  dropIdleConnections(): void {
    for (const sockets of Object.values(this.agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  }

  private url(req: KubeRequest): URL {
    const url = /^https?:\/\//.test(req.path) ? new URL(req.path) : new URL(this.baseUrl + req.path.replace(/^\/?/, '/'));
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    return url;
  }

  /**
   * What the next request is sent with. An exec plugin runs here, within its own time limit and not
   * the request's: a login may take longer than a request may (callers start their request timers after).
   */
  credentials(): Promise<RequestCredentials> {
    return this.auth.credentials();
  }

  /**
   * Sends one request; resolves once the answer's headers are in. The caller reads or discards the
   * body; `signal` aborts the request at any time. A 401 makes the next request fetch a new exec credential.
   */
  async send(req: KubeRequest, credentials?: RequestCredentials): Promise<IncomingMessage> {
    credentials ??= await this.auth.credentials();
    req.signal.throwIfAborted();
    const url = this.url(req);
    const headers: OutgoingHttpHeaders = { 'User-Agent': `par-identity/${VERSION}`, ...req.headers, ...credentials.headers };
    if (req.body !== undefined) headers['Content-Length'] = Buffer.byteLength(req.body);
    const tls = this.secure ? { ...this.auth.tls, ...(credentials.cert ? { cert: credentials.cert, key: credentials.key } : {}) } : {};
    const options: RequestOptions & ConnectionOptions = { method: req.method, headers, agent: this.agent, signal: req.signal, ...tls };
    const send = this.secure ? httpsRequest : httpRequest;
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const r = send(url, options, resolve);
      r.once('error', reject);
      r.end(req.body);
    });
    if (response.statusCode === 401) this.auth.unauthorized(credentials);
    return response;
  }

  /** One whole exchange within the per-request timeout, the answer read into memory up to `maxBytes`. */
  async sendBuffered(
    req: Omit<KubeRequest, 'signal'> & { signal?: AbortSignal | undefined },
    maxBytes = this.maxResponseBytes,
  ): Promise<BufferedResponse> {
    const credentials = await this.auth.credentials();
    const signal = requestSignal(this.limits, req.signal);
    try {
      const response = await this.send({ ...req, signal }, credentials);
      const status = response.statusCode ?? 0;
      const ok = status >= 200 && status <= 299;
      // An error answer larger than its cap loses its text, not its status.
      const body = ok
        ? await readBoundedBody(response, maxBytes, 'Kubernetes API answer')
        : await readBoundedBody(response, MAX_ERROR_BODY_BYTES).catch(() => Buffer.alloc(0));
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(response.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      return { status, headers, body };
    } catch (err) {
      // An abort while the body streams surfaces as a socket error: report the abort's own reason.
      if (signal.aborted && !(err instanceof ResponseTooLargeError))
        throw Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError' });
      throw err;
    }
  }

  /** GET that reads a JSON answer; a non-2xx answer throws KubeApiStatus (code and Status body). */
  async getJson(path: string, query: Record<string, string | boolean | undefined>): Promise<unknown> {
    const res = await this.sendBuffered({ method: 'GET', path, query, headers: { Accept: 'application/json' } });
    if (res.status < 200 || res.status > 299) throw KubeApiStatus.from(res.status, res.body.toString('utf8'), res.headers['retry-after']);
    return JSON.parse(res.body.toString('utf8'));
  }
}
