import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

// How kubectl reaches the API server through a proxy (Go net/http with client-go's rest config; facts
// in docs/kubernetes-client.md): the cluster's proxy-url when set (http, https or socks5; every host,
// loopback included), else HTTPS_PROXY / HTTP_PROXY with NO_PROXY, where localhost and loopback
// addresses never go through a proxy. An http(s) proxy gets CONNECT host:port (its URL's user and
// password as Proxy-Authorization), a socks5 one the host name or address as written. An https proxy
// is verified with the cluster's own TLS settings, as Go does.

export interface ProxyChoice {
  url: URL;
  /** "proxy-url" or the environment variable it came from. */
  source: string;
}

const envAny = (env: NodeJS.ProcessEnv, ...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');

/** Go's httpproxy: a value without a scheme is an http proxy. */
function parseProxy(value: string): URL | undefined {
  try {
    const url = new URL(value);
    if (url.host) return url;
  } catch {
    // fall through to the http:// reading
  }
  try {
    return new URL(`http://${value}`);
  } catch {
    return undefined;
  }
}

function ipInCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/');
  const bits = Number(bitsText);
  const family = isIP(base ?? '');
  if (!family || family !== isIP(ip) || !Number.isInteger(bits)) return false;
  const bytes = (a: string) => (family === 4 ? a.split('.').map(Number) : expandV6(a));
  const a = bytes(ip);
  const b = bytes(base!);
  for (let i = 0, left = bits; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if (((a[i] ?? 0) & mask) !== ((b[i] ?? 0) & mask)) return false;
  }
  return true;
}

function expandV6(ip: string): number[] {
  const [head, tail] = ip.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return all.flatMap((g) => {
    const n = Number.parseInt(g, 16) || 0;
    return [n >> 8, n & 0xff];
  });
}

const isLoopback = (host: string) => {
  const family = isIP(host);
  if (family === 4) return host.startsWith('127.');
  if (family === 6) return expandV6(host).every((b, i) => b === (i === 15 ? 1 : 0));
  return false;
};

/** golang.org/x/net/http/httpproxy useProxy, inverted: true when loopback or a NO_PROXY entry exempts host:port. */
export function noProxyExempts(noProxy: string, host: string, port: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost' || isLoopback(name)) return true;
  const ip = isIP(name) ? name : undefined;
  for (const raw of noProxy.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === '*') return true;
    if (entry.includes('/')) {
      if (ip && ipInCidr(ip, entry)) return true;
      continue;
    }
    // host:port, [v6]:port, or a host alone (a bare IPv6 address has colons of its own).
    const withPort = /^\[([^\]]*)\]:(\d+)$/.exec(entry) ?? /^([^:]+):(\d+)$/.exec(entry);
    let entryHost = (withPort ? withPort[1]! : entry).replace(/^\[|\]$/g, '');
    const entryPort = withPort ? withPort[2]! : '';
    if (!entryHost) continue;
    const portMatches = !entryPort || entryPort === port;
    if (isIP(entryHost)) {
      if (ip === entryHost && portMatches) return true;
      continue;
    }
    if (entryHost.startsWith('*.')) entryHost = entryHost.slice(1);
    // "example.com" covers the host and its subdomains, ".example.com" the subdomains only.
    const matchHost = !entryHost.startsWith('.');
    const suffix = matchHost ? `.${entryHost}` : entryHost;
    if ((name.endsWith(suffix) || (matchHost && name === entryHost)) && portMatches) return true;
  }
  return false;
}

/** The proxy kubectl would use to reach `server`, if any. Throws on a proxy-url kubectl refuses (checked before, by confirmUsable). */
export function proxyFor(server: URL, proxyUrl: string | undefined, env: NodeJS.ProcessEnv): ProxyChoice | undefined {
  if (proxyUrl) return { url: new URL(proxyUrl), source: 'proxy-url' };
  const https = server.protocol === 'https:';
  const names = https ? ['HTTPS_PROXY', 'https_proxy'] : ['HTTP_PROXY', 'http_proxy'];
  // Go ignores HTTP_PROXY under CGI (REQUEST_METHOD set), where a client's Proxy header could set it.
  if (!https && env.REQUEST_METHOD) return undefined;
  const value = envAny(env, ...names);
  if (!value) return undefined;
  const port = server.port || (https ? '443' : '80');
  if (noProxyExempts(envAny(env, 'NO_PROXY', 'no_proxy') ?? '', server.hostname, port)) return undefined;
  const url = parseProxy(value);
  if (!url) return undefined;
  return { url, source: env[names[0]!] ? names[0]! : names[1]! };
}

function proxyAuthorization(url: URL): string | undefined {
  if (!url.username && !url.password) return undefined;
  return `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
}

function connected(socket: Socket, event: 'connect' | 'secureConnect'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    socket.once(event, () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Reads from the socket until `take` says how many of the bytes so far make the answer (undefined:
 * not yet; it may throw to give up); what follows is put back on the socket for the next reader.
 */
function readUntil(socket: Socket, take: (buffered: Buffer) => number | undefined, closed: string): Promise<Buffer> {
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
    // Paused again once done: data that comes (or is put back) before the next reader must wait for it.
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onError);
      socket.pause();
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', onError);
    // A stream paused on purpose stays paused when a 'data' listener comes: resume it explicitly.
    socket.resume();
  });
}

/** Reads exactly `n` bytes from the socket (SOCKS answers come in small fixed parts). */
function readBytes(socket: Socket, n: number): Promise<Buffer> {
  return readUntil(socket, (b) => (b.length >= n ? n : undefined), 'the SOCKS proxy closed the connection');
}

const SOCKS_REPLIES = ['succeeded', 'general failure', 'connection not allowed by ruleset', 'network unreachable', 'host unreachable', 'connection refused', 'TTL expired', 'command not supported', 'address type not supported'];

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
async function readHead(socket: Socket): Promise<string> {
  const head = await readUntil(
    socket,
    (b) => {
      const end = b.indexOf('\r\n\r\n');
      if (end >= 0) return end + 4;
      if (b.length > 16 * 1024) throw new Error('the proxy answered CONNECT with more than 16 KiB of headers');
      return undefined;
    },
    'the proxy closed the connection before answering CONNECT',
  );
  return head.subarray(0, head.length - 4).toString('latin1');
}

async function httpConnect(proxy: URL, host: string, port: number, proxyTls: ConnectionOptions): Promise<Socket> {
  const secure = proxy.protocol === 'https:';
  const proxyHost = proxy.hostname.replace(/^\[|\]$/g, '');
  const proxyPort = Number(proxy.port || (secure ? 443 : 80));
  const socket = secure
    ? await connected(tlsConnect({ ...proxyTls, host: proxyHost, port: proxyPort, servername: proxyTls.servername ?? (isIP(proxyHost) ? '' : proxyHost) }), 'secureConnect')
    : await connected(netConnect(proxyPort, proxyHost), 'connect');
  try {
    const authorization = proxyAuthorization(proxy);
    const target = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${authorization ? `Proxy-Authorization: ${authorization}\r\n` : ''}\r\n`);
    const head = await readHead(socket);
    const status = /^HTTP\/1\.[01] (\d{3})([^\r\n]*)/.exec(head);
    if (status?.[1] !== '200') throw new Error(`the proxy answered CONNECT with ${status ? `${status[1]}${status[2]}` : 'something that is not HTTP'}`.trim());
    return socket;
  } catch (err) {
    socket.destroy();
    throw err;
  }
}

/** A connection to host:port through the proxy, ready for TLS (or plain HTTP) to the API server. */
export function tunnel(proxy: URL, host: string, port: number, proxyTls: ConnectionOptions): Promise<Socket> {
  if (proxy.protocol === 'socks5:' || proxy.protocol === 'socks5h:') return socks5(proxy, host, port);
  return httpConnect(proxy, host, port, proxyTls);
}

/** The proxy as it may be printed: no user or password. */
export function describeProxy(choice: ProxyChoice): string {
  return `${choice.url.protocol}//${choice.url.host} (${choice.source})`;
}
