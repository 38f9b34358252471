import { describe, expect, it } from 'vitest';
import { DEFAULT_NETWORK, type NetworkSettings, type ProxyTarget } from '../../src/config/network-settings.js';
import { proxyFor as agentProxyFor } from '../../src/enrollment/proxy-choice.js';
import { proxyFor as kubectlProxyFor } from '../../src/kube/kube-proxy.js';
import { isLoopback } from '../../src/net/ip.js';
import { exactNoProxyMatch, goNoProxyExempts } from '../../src/net/no-proxy.js';

// The one NO_PROXY matcher keeps both rules (src/net/no-proxy.ts): the agent's exact host[:port] and
// Go's httpproxy (the agent's no_proxy_nonexact_match, kubectl's NO_PROXY). Each row is decided by
// both, so a change to one rule that leaks into the other shows here.

const PROXY: ProxyTarget = { protocol: 'http:', hostname: 'p', port: 1, display: 'p:1' };
const agent = (noProxy: string[], nonExact: boolean): NetworkSettings => ({
  ...DEFAULT_NETWORK,
  proxy: { https: PROXY, noProxy, nonExact },
});

describe("NO_PROXY: the agent's exact rule and Go's rule side by side", () => {
  it.each<[string, string, boolean, boolean]>([
    // entry, URL, exact bypasses, Go bypasses
    ['api.example.com', 'https://api.example.com/x', true, true],
    ['example.com', 'https://api.example.com/x', false, true],
    ['.example.com', 'https://api.example.com/x', false, true],
    ['.example.com', 'https://example.com/x', false, false],
    ['*.example.com', 'https://api.example.com/x', false, true],
    ['*', 'https://api.example.com/x', false, true],
    ['10.0.0.0/8', 'https://10.1.2.3/x', false, true],
    ['10.1.2.3', 'https://10.1.2.3/x', true, true],
    ['api.example.com:8443', 'https://api.example.com:8443/x', true, true],
    ['api.example.com:8443', 'https://api.example.com/x', false, false],
    ['api.example.com', 'https://api.example.com:8443/x', true, true],
    ['other.example', 'https://127.0.0.1:9/x', false, true],
    ['other.example', 'https://localhost/x', false, true],
  ])('no_proxy %j, %s: exact %s, Go %s', (entry, href, exact, go) => {
    const url = new URL(href);
    expect(exactNoProxyMatch([entry], url)).toBe(exact);
    expect(goNoProxyExempts([entry], url.hostname, url.port || '443')).toBe(go);
    // The agent picks the rule by no_proxy_nonexact_match; kubectl always follows Go's.
    expect(agentProxyFor(url, agent([entry], false)) === undefined).toBe(exact);
    expect(agentProxyFor(url, agent([entry], true)) === undefined).toBe(go);
    expect(kubectlProxyFor(url, undefined, { HTTPS_PROXY: 'http://p:1', NO_PROXY: entry }) === undefined).toBe(go);
  });

  it("a list: any entry decides; Go's rule reads a comma-separated string as kubectl's environment has it", () => {
    expect(goNoProxyExempts('a.example, .corp.example', 'x.corp.example', '443')).toBe(true);
    expect(goNoProxyExempts(['a.example', '.corp.example'], 'x.corp.example', '443')).toBe(true);
    expect(exactNoProxyMatch(['a.example', 'x.corp.example'], new URL('https://x.corp.example'))).toBe(true);
  });
});

describe('isLoopback: one idea of loopback (agent IPC, proxies)', () => {
  it.each<[string, boolean]>([
    ['localhost', true],
    ['LOCALHOST', true],
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['::1', true],
    ['[::1]', true],
    ['0:0:0:0:0:0:0:1', true],
    ['128.0.0.1', false],
    ['::2', false],
    ['localhost.example', false],
    ['10.0.0.1', false],
  ])('%s → %s', (host, loopback) => {
    expect(isLoopback(host)).toBe(loopback);
  });
});
