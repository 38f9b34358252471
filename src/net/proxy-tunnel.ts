import { isIP, connect as netConnect, type Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { expandV6 } from './ip.js';

// THE way through a proxy, for enrollment (src/enrollment/http-exchange.ts) and Kubernetes
// (src/kube/kube-transport.ts): an http(s) proxy gets CONNECT host:port (Proxy-Authorization when it
// has credentials), a socks5 one the host name or address as written. An https proxy is verified
// with the TLS options the caller gives (the agent's network settings, or the cluster's as Go does).
// The socket comes back paused, ready for TLS (or plain HTTP) to the server. node:tls is loaded only
// for an https proxy: a process that never needs TLS does not pay for OpenSSL's TLS side.

/** An http(s) proxy, as the callers resolve it: its credentials already made a header. */
interface ConnectProxy {
  protocol: string;
  hostname: string;
  port: number;
  /** Proxy-Authorization header value when the proxy URL carries user:password. */
  authorization?: string | undefined;
}

/** host:port of a proxy, for messages: never the credentials. */
const display = (proxy: ConnectProxy) => `${isIP(proxy.hostname) === 6 ? `[${proxy.hostname}]` : proxy.hostname}:${proxy.port}`;

function connected(socket: Socket, event: 'connect' | 'secureConnect', signal?: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const onAbort = () => socket.destroy(signal?.reason);
    socket.once(event, () => {
      socket.off('error', reject);
      signal?.removeEventListener('abort', onAbort);
      resolve(socket);
    });
    socket.once('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Reads from the socket until `take` says how many of the bytes so far make the answer (undefined:
 * not yet; it may throw to give up); what follows is put back on the socket for the next reader.
 */
function readUntil(socket: Socket, take: (buffered: Buffer) => number | undefined, closed: string, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      let n: number | undefined;
      try {
        n = take(buffered);
      } catch (err) {
        cleanup();
        reject(err);
        return;
      }
      if (n === undefined) return;
      cleanup();
      if (buffered.length > n) socket.unshift(buffered.subarray(n));
      resolve(buffered.subarray(0, n));
    };
    const onEnd = () => {
      cleanup();
      reject(new Error(closed));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onAbort = () => {
      cleanup();
      socket.destroy();
      reject(signal?.reason);
    };
    // Paused again once done: data that comes (or is put back) before the next reader must wait for it.
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
      socket.pause();
    };
    if (signal?.aborted) return onAbort();
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
    // A stream paused on purpose stays paused when a 'data' listener comes: resume it explicitly.
    socket.resume();
  });
}

/** Reads exactly `n` bytes from the socket (SOCKS answers come in small fixed parts). */
function readBytes(socket: Socket, n: number): Promise<Buffer> {
  return readUntil(socket, (b) => (b.length >= n ? n : undefined), 'the SOCKS proxy closed the connection');
}

const SOCKS_REPLIES = [
  'succeeded',
  'general failure',
  'connection not allowed by ruleset',
  'network unreachable',
  'host unreachable',
  'connection refused',
  'TTL expired',
  'command not supported',
  'address type not supported',
];

async function socks5(proxy: URL, host: string, port: number): Promise<Socket> {
  const socket = await connected(netConnect(Number(proxy.port || 1080), proxy.hostname), 'connect');
  try {
    const user = decodeURIComponent(proxy.username);
    const pass = decodeURIComponent(proxy.password);
    socket.write(Buffer.from(user || pass ? [5, 2, 0, 2] : [5, 1, 0]));
    const [version, method] = await readBytes(socket, 2);
    if (version !== 5) throw new Error('the proxy does not speak SOCKS5');
    if (method === 2) {
      const u = Buffer.from(user);
      const p = Buffer.from(pass);
      socket.write(Buffer.concat([Buffer.from([1, u.length]), u, Buffer.from([p.length]), p]));
      const [, status] = await readBytes(socket, 2);
      if (status !== 0) throw new Error('the SOCKS proxy refused the username and password');
    } else if (method !== 0) throw new Error('the SOCKS proxy accepts none of our authentication methods');
    const family = isIP(host);
    const address =
      family === 4
        ? Buffer.from([1, ...host.split('.').map(Number)])
        : family === 6
          ? Buffer.from([4, ...expandV6(host)])
          : Buffer.concat([Buffer.from([3, Buffer.byteLength(host)]), Buffer.from(host)]);
    socket.write(Buffer.concat([Buffer.from([5, 1, 0]), address, Buffer.from([port >> 8, port & 0xff])]));
    const [, reply, , atyp] = await readBytes(socket, 4);
    if (reply !== 0) throw new Error(`the SOCKS proxy could not connect: ${SOCKS_REPLIES[reply ?? 1] ?? `reply ${reply}`}`);
    const rest = atyp === 1 ? 4 : atyp === 4 ? 16 : (await readBytes(socket, 1))[0]!;
    await readBytes(socket, rest + 2);
    return socket;
  } catch (err) {
    socket.destroy();
    throw err;
  }
}

/** Reads up to the end of an HTTP head (a blank line), at most 16 KiB; what follows is left on the socket. */
async function readHead(socket: Socket, signal?: AbortSignal): Promise<string> {
  const head = await readUntil(
    socket,
    (b) => {
      const end = b.indexOf('\r\n\r\n');
      if (end >= 0) return end + 4;
      if (b.length > 16 * 1024) throw new Error('the proxy answered CONNECT with more than 16 KiB of headers');
      return undefined;
    },
    'the proxy closed the connection before answering CONNECT',
    signal,
  );
  return head.subarray(0, head.length - 4).toString('latin1');
}

/**
 * A CONNECT tunnel to host:port through an http(s) proxy. `signal` ends it at once (the caller's
 * request timeout, a stopped run) with the signal's reason.
 */
export async function connectTunnel(
  proxy: ConnectProxy,
  host: string,
  port: number,
  proxyTls: ConnectionOptions,
  signal?: AbortSignal,
): Promise<Socket> {
  signal?.throwIfAborted();
  const proxyHost = proxy.hostname.replace(/^\[|\]$/g, '');
  const socket =
    proxy.protocol === 'https:'
      ? await connected(
          (await import('node:tls')).connect({
            ...proxyTls,
            host: proxyHost,
            port: proxy.port,
            servername: proxyTls.servername ?? (isIP(proxyHost) ? '' : proxyHost),
          }),
          'secureConnect',
          signal,
        )
      : await connected(netConnect(proxy.port, proxyHost), 'connect', signal);
  try {
    const target = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
    socket.write(
      `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : ''}\r\n`,
    );
    const head = await readHead(socket, signal);
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
    if (!status) throw new Error(`proxy ${display(proxy)} answered CONNECT with something that is not HTTP`);
    if (status[1] !== '200') throw new Error(`proxy ${display(proxy)} answered HTTP ${status[1]} to CONNECT`);
    return socket;
  } catch (err) {
    socket.destroy();
    throw err;
  }
}

function proxyAuthorization(url: URL): string | undefined {
  if (!url.username && !url.password) return undefined;
  return `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
}

/** A connection to host:port through the proxy URL (http, https or socks5), ready for TLS (or plain HTTP) to the server. */
export function tunnel(proxy: URL, host: string, port: number, proxyTls: ConnectionOptions): Promise<Socket> {
  if (proxy.protocol === 'socks5:' || proxy.protocol === 'socks5h:') return socks5(proxy, host, port);
  const secure = proxy.protocol === 'https:';
  const target: ConnectProxy = {
    protocol: proxy.protocol,
    hostname: proxy.hostname,
    port: Number(proxy.port || (secure ? 443 : 80)),
    authorization: proxyAuthorization(proxy),
  };
  return connectTunnel(target, host, port, proxyTls);
}
