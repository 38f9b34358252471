import type { NetworkSettings, ProxyTarget } from '../config/network-settings.js';
import { exactNoProxyMatch, goNoProxyExempts } from '../net/no-proxy.js';

// Which proxy (if any) a request goes through, as the agent decides (pkg/util/http/transport.go): its
// no_proxy entries match the URL's exact host[:port]; with no_proxy_nonexact_match the whole choice is
// Go's httpproxy: `*`, IPs and CIDRs, domain suffixes, and localhost/loopback never proxied. Both rules
// live in src/net/no-proxy.ts, the one NO_PROXY matcher (kubectl's NO_PROXY uses the second).

export function proxyFor(url: URL, network: NetworkSettings): ProxyTarget | undefined {
  const target = url.protocol === 'https:' ? network.proxy.https : network.proxy.http;
  if (!target) return undefined;
  if (network.proxy.nonExact) {
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return goNoProxyExempts(network.proxy.noProxy, url.hostname, port) ? undefined : target;
  }
  return exactNoProxyMatch(network.proxy.noProxy, url) ? undefined : target;
}
