import { ConfigError } from '../errors.js';
import type { AgentConfig } from './agent-config.js';

// The agent's network settings for calls to Datadog (docs/protocol.md §11): proxies from the `proxy:` block,
// overridden by DD_PROXY_* then the standard variables; no_proxy with exact host matching unless
// no_proxy_nonexact_match; the cloud metadata addresses always bypass the proxy unless
// use_proxy_for_cloud_metadata; TLS always verified (explicitly: NODE_TLS_REJECT_UNAUTHORIZED is
// ignored) unless skip_ssl_validation, with min_tls_version.

/** The proxy route of a request: the proxy it goes through (none: a direct connection). */
export interface ProxyTarget {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number;
  /** host:port, for messages: never the credentials. */
  display: string;
  /** Proxy-Authorization header value when the URL carries user:password. */
  authorization?: string;
}

export interface NetworkSettings {
  proxy: { http?: ProxyTarget; https?: ProxyTarget; noProxy: string[]; nonExact: boolean };
  tls: { rejectUnauthorized: boolean; minVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3' };
  /** Operator-facing warnings (skip_ssl_validation, ignored NODE_TLS_REJECT_UNAUTHORIZED). */
  warnings: string[];
  /** One line saying which proxy is used, if any (hosts only). */
  summary: string;
  /** Aborts every request sent with these settings (the run's requests signal, src/rotation/runner.ts). */
  signal?: AbortSignal;
}

const CLOUD_METADATA_HOSTS = ['169.254.169.254', '100.100.100.200'];

export const DEFAULT_NETWORK: NetworkSettings = {
  proxy: { noProxy: [...CLOUD_METADATA_HOSTS], nonExact: false },
  tls: { rejectUnauthorized: true, minVersion: 'TLSv1.2' },
  warnings: [],
  summary: 'proxy: none',
};

const TLS_VERSIONS: Record<string, NetworkSettings['tls']['minVersion']> = {
  'tlsv1.0': 'TLSv1',
  'tlsv1.1': 'TLSv1.1',
  'tlsv1.2': 'TLSv1.2',
  'tlsv1.3': 'TLSv1.3',
};

function parseProxyUrl(raw: string, where: string): ProxyTarget {
  let url: URL;
  try {
    url = new URL(raw.includes('://') ? raw : `http://${raw}`);
  } catch {
    throw new ConfigError(
      'PROXY_INVALID',
      `${where} is not a proxy URL`,
      'Set it to http://host:port (credentials as http://user:password@host:port).',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(
      'PROXY_INVALID',
      `${where} uses ${url.protocol.replace(':', '')}, which par-identity does not support`,
      'Use an http:// or https:// proxy.',
    );
  }
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const target: ProxyTarget = {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    display: `${url.hostname}:${port}`,
  };
  if (url.username || url.password) {
    target.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  }
  return target;
}

function listOf(value: unknown, separators: RegExp): string[] {
  if (Array.isArray(value)) return value.map((v) => String(v).trim()).filter(Boolean);
  if (typeof value === 'string')
    return value
      .split(separators)
      .map((v) => v.trim())
      .filter(Boolean);
  return [];
}

function envValue(env: NodeJS.ProcessEnv, ...names: string[]): { value: string; name: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return { value, name };
  }
  return undefined;
}

export function resolveNetworkSettings(config: AgentConfig, env: NodeJS.ProcessEnv): NetworkSettings {
  // The agent config layer already applies DD_PROXY_HTTP(S)/DD_PROXY_NO_PROXY over the file.
  const pick = (key: 'http' | 'https', standard: string[]) => {
    const fromDd = config.getString(`proxy.${key}`);
    if (fromDd) return { value: fromDd, where: `proxy.${key} (${config.sourceOf(`proxy.${key}`)})` };
    const std = envValue(env, ...standard);
    return std ? { value: std.value, where: `env ${std.name}` } : undefined;
  };
  const http = pick('http', ['HTTP_PROXY', 'http_proxy']);
  const https = pick('https', ['HTTPS_PROXY', 'https_proxy']);
  const ddNoProxy = config.get('proxy.no_proxy');
  const noProxy =
    ddNoProxy !== undefined && ddNoProxy !== null
      ? listOf(ddNoProxy, config.sourceOf('proxy.no_proxy').startsWith('env ') ? /[\s,]+/ : /[\s,]+/)
      : listOf(envValue(env, 'NO_PROXY', 'no_proxy')?.value, /,/);
  if (!config.getBool('use_proxy_for_cloud_metadata')) {
    for (const host of CLOUD_METADATA_HOSTS) if (!noProxy.includes(host)) noProxy.push(host);
  }
  const warnings: string[] = [];
  const skip = config.getBool('skip_ssl_validation');
  if (skip) {
    warnings.push(
      `TLS CERTIFICATES ARE NOT VERIFIED for Datadog calls: skip_ssl_validation is true (${config.sourceOf('skip_ssl_validation')}); ` +
        'anyone on the path can read the API key. Turn it off as soon as possible.',
    );
  }
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    warnings.push(
      'NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored: certificates are verified anyway (extra CAs: NODE_EXTRA_CA_CERTS; ' +
        'the agent setting skip_ssl_validation if you really must).',
    );
  }
  const rawMin = (config.getString('min_tls_version') ?? 'tlsv1.2').toLowerCase();
  const minVersion = TLS_VERSIONS[rawMin];
  if (!minVersion) {
    throw new ConfigError(
      'CONFIG_VALUE',
      `min_tls_version is ${JSON.stringify(rawMin)} (${config.sourceOf('min_tls_version')})`,
      'Use one of tlsv1.0, tlsv1.1, tlsv1.2, tlsv1.3, as the agent accepts.',
    );
  }
  const proxy: NetworkSettings['proxy'] = { noProxy, nonExact: config.getBool('no_proxy_nonexact_match') };
  if (http) proxy.http = parseProxyUrl(http.value, http.where);
  if (https) proxy.https = parseProxyUrl(https.value, https.where);
  const parts = [proxy.https ? `https via ${proxy.https.display}` : '', proxy.http ? `http via ${proxy.http.display}` : ''].filter(Boolean);
  const entries = `${noProxy.length} entr${noProxy.length === 1 ? 'y' : 'ies'}`;
  const summary = parts.length
    ? `proxy: ${parts.join(', ')} (no_proxy: ${entries}, ${proxy.nonExact ? 'suffix/CIDR' : 'exact host'} matching)`
    : 'proxy: none';
  return { proxy, tls: { rejectUnauthorized: !skip, minVersion }, warnings, summary };
}
