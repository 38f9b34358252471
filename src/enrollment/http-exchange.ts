import { type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';
import { isIP } from 'node:net';
import { DEFAULT_NETWORK, type NetworkSettings } from '../config/network-settings.js';
import { ResponseTooLargeError, readBoundedBody } from '../http-body.js';
import { connectTunnel } from '../net/proxy-tunnel.js';
import { proxyFor } from './proxy-choice.js';

// One HTTP exchange over node:http/https (no undici: its import alone cost ~70 ms of a rotation):
// no redirect following (a redirect must never carry the API key to another host), a hard cap on
// the response body, the agent's proxy settings (a CONNECT tunnel for https: src/net/proxy-tunnel.ts), and TLS verification
// passed explicitly so NODE_TLS_REJECT_UNAUTHORIZED cannot turn it off. Extra CAs come from
// NODE_EXTRA_CA_CERTS through node's TLS defaults. node:https and node:tls are loaded for an https
// URL or proxy only: loading them (OpenSSL's TLS side) costs a process about 4 MiB, which a
// plain-http endpoint (an emulator, a local relay) does not need.

const https = () => import('node:https');

const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface HttpResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

function tlsOptions(network: NetworkSettings, host: string) {
  // SNI carries names only (RFC 6066); an IP literal is verified against the certificate's IP SANs.
  return {
    rejectUnauthorized: network.tls.rejectUnauthorized,
    minVersion: network.tls.minVersion,
    ...(isIP(host) ? {} : { servername: host }),
  };
}

async function send(
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string | undefined,
  network: NetworkSettings,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const proxy = proxyFor(url, network);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const base = {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) }) },
    signal,
  };
  let req: ClientRequest;
  if (url.protocol === 'https:') {
    if (proxy) {
      const raw = await connectTunnel(proxy, hostname, Number(port), tlsOptions(network, proxy.hostname), signal);
      const { connect: tlsConnect } = await import('node:tls');
      const secure = tlsConnect({ socket: raw, ...tlsOptions(network, hostname) });
      req = httpRequest({ ...base, host: hostname, port, path: url.pathname + url.search, createConnection: () => secure });
    } else {
      req = (await https()).request({
        ...base,
        host: hostname,
        port,
        path: url.pathname + url.search,
        agent: false,
        ...tlsOptions(network, hostname),
      });
    }
  } else if (proxy) {
    const proxyHeaders = proxy.authorization ? { 'Proxy-Authorization': proxy.authorization } : {};
    req = httpRequest({
      ...base,
      headers: { ...base.headers, ...proxyHeaders, Host: url.host },
      host: proxy.hostname,
      port: proxy.port,
      path: url.href,
      agent: false,
    });
  } else {
    req = httpRequest({ ...base, host: hostname, port, path: url.pathname + url.search, agent: false });
  }
  return new Promise((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
    req.end(body);
  });
}

export async function exchange(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
  network: NetworkSettings = DEFAULT_NETWORK,
): Promise<HttpResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no complete answer within ${Math.round(timeoutMs)} ms`)), timeoutMs);
  try {
    const res = await send(
      method,
      new URL(url),
      headers,
      body,
      network,
      network.signal ? AbortSignal.any([controller.signal, network.signal]) : controller.signal,
    );
    const text = (await readBoundedBody(res, MAX_RESPONSE_BYTES)).toString('utf8');
    const flat: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(res.headers)) flat[name] = Array.isArray(value) ? value.join(', ') : value;
    return { status: res.statusCode ?? 0, headers: flat, body: text };
  } catch (err) {
    // An abort surfaces as AbortError, or as a reset while the body streams; the reason says what happened.
    if (network.signal?.aborted && !(err instanceof ResponseTooLargeError)) throw network.signal.reason;
    if (controller.signal.aborted && !(err instanceof ResponseTooLargeError)) throw controller.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** A short, key-free description of a network failure for retry logs and error messages. */
/** The errno-style code of a failed exchange (undici puts the socket's in `cause`). */
export function networkErrorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e.cause?.code ?? e.code;
}

export function describeNetworkError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code;
  const message = e.cause?.message ?? e.message ?? String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
