import { BlockList, isIP } from 'node:net';
import type { NetworkSettings, ProxyTarget } from '../config/network-settings.js';

// Which proxy (if any) a request goes through. The agent compares no_proxy entries with the URL's
// host[:port] exactly; with no_proxy_nonexact_match it follows Go's httpproxy rules: `*`, IPs and
// CIDRs, and domain suffixes (`example.com` and `.example.com` both match sub.example.com).

function nonExactMatch(entry: string, hostname: string, port: string): boolean {
  if (entry === '*') return true;
  let host = entry.toLowerCase();
  let entryPort = '';
  const hostPort = /^(.*):(\d+)$/.exec(host);
  if (hostPort && !host.includes('/') && isIP(host) !== 6) {
    host = hostPort[1]!;
    entryPort = hostPort[2]!;
  }
  if (entryPort && entryPort !== port) return false;
  const target = hostname.toLowerCase();
  if (host.includes('/')) {
    const [net, bits] = host.split('/');
    const family = isIP(net!);
    if (!family || isIP(target) !== family) return false;
    const list = new BlockList();
    list.addSubnet(net!, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    return list.check(target, family === 4 ? 'ipv4' : 'ipv6');
  }
  if (isIP(host)) return host === target;
  const bare = host.replace(/^\*?\./, '');
  return target === bare || target.endsWith(`.${bare}`);
}

export function proxyFor(url: URL, network: NetworkSettings): ProxyTarget | undefined {
  const target = url.protocol === 'https:' ? network.proxy.https : network.proxy.http;
  if (!target) return undefined;
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  for (const entry of network.proxy.noProxy) {
    if (entry === url.host || entry === hostname) return undefined;
    if (network.proxy.nonExact && nonExactMatch(entry, hostname, port)) return undefined;
  }
  return target;
}
