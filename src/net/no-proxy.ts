import { isIP } from 'node:net';
import { ipInCidr, isLoopback } from './ip.js';

// THE NO_PROXY matcher, with the two rules the programs we imitate follow (docs/configuration.md,
// docs/protocol.md §11, docs/kubernetes-client.md):
// - the agent's default: a no_proxy entry matches the request's exact host[:port] (exactNoProxyMatch);
// - Go's golang.org/x/net/http/httpproxy (goNoProxyExempts): what the agent follows with
//   no_proxy_nonexact_match, and what kubectl follows for NO_PROXY: localhost and loopback addresses
//   never go through a proxy; `*`; IPs and CIDRs; `example.com` covering the host and its subdomains,
//   `.example.com` (or `*.example.com`) the subdomains only; each optionally with `:port`.

/** The agent's exact rule: an entry equal to the URL's host[:port] (or its host alone). */
export function exactNoProxyMatch(entries: readonly string[], url: URL): boolean {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  return entries.some((entry) => entry === url.host || entry === hostname);
}

/** httpproxy's useProxy, inverted: true when loopback or a NO_PROXY entry exempts host:port. */
export function goNoProxyExempts(noProxy: string | readonly string[], host: string, port: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (isLoopback(name)) return true;
  const ip = isIP(name) ? name : undefined;
  for (const raw of typeof noProxy === 'string' ? noProxy.split(',') : noProxy) {
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
