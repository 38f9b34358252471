import { goNoProxyExempts } from '../net/no-proxy.js';

// How kubectl reaches the API server through a proxy (Go net/http with client-go's rest config; facts
// in docs/kubernetes-client.md): the cluster's proxy-url when set (http, https or socks5; every host,
// loopback included), else HTTPS_PROXY / HTTP_PROXY with NO_PROXY, where localhost and loopback
// addresses never go through a proxy (Go's httpproxy rules: src/net/no-proxy.ts). The tunnel through
// the proxy is the one every connection uses (src/net/proxy-tunnel.ts); an https proxy is verified
// with the cluster's own TLS settings, as Go does.

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
  if (goNoProxyExempts(envAny(env, 'NO_PROXY', 'no_proxy') ?? '', server.hostname, port)) return undefined;
  const url = parseProxy(value);
  if (!url) return undefined;
  return { url, source: env[names[0]!] ? names[0]! : names[1]! };
}

/** The proxy as it may be printed: no user or password. */
export function describeProxy(choice: ProxyChoice): string {
  return `${choice.url.protocol}//${choice.url.host} (${choice.source})`;
}
