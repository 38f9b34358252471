import { request as httpRequest } from 'node:http';
import type { AgentConfig } from '../config/agent-config.js';
import { boundedExchange, type SmallAnswer } from './bounded-exchange.js';
import { configFlagOr, configNumber } from './config-values.js';
import { hostPath, SERVICE_ACCOUNT_CA, SERVICE_ACCOUNT_TOKEN } from './host-files.js';
import type { HostProbes } from './host-probes.js';

// How the agent reaches the kubelet (pkg/util/kubernetes/kubelet/kubelet_client.go, getKubeletClient):
// HTTPS on kubernetes_https_kubelet_port (10250) first, then plain HTTP on kubernetes_http_kubelet_port
// (10255), a port ≤ 0 being off; TLS verified unless kubelet_tls_verify is false, against
// kubelet_client_ca or else the Pod's service-account CA; kubelet_client_crt/kubelet_client_key as
// client certificate; the bearer token of kubelet_auth_token_path or else the service-account token,
// sent over HTTPS only.

export interface KubeletSettings {
  httpsPort: number;
  httpPort: number;
  tlsVerify: boolean;
  /** PEM of the CA to trust; undefined = the system's (no CA file configured nor present). */
  ca?: string;
  /** Why the configured CA could not be read; the agent then fails every HTTPS candidate when verifying. */
  caProblem?: string;
  clientCert?: { cert: string; key: string };
  clientCertProblem?: string;
  token?: string;
  /** kubelet_use_api_server: the node name comes from /stats/summary instead of /pods. */
  useApiServer: boolean;
}

type SettingsResult = { ok: true; settings: KubeletSettings } | { ok: false; reason: string };

async function readOptional(probes: HostProbes, path: string): Promise<string | undefined> {
  try {
    return await probes.readFile(path);
  } catch {
    return undefined;
  }
}

export async function kubeletSettings(config: AgentConfig, env: NodeJS.ProcessEnv, probes: HostProbes): Promise<SettingsResult> {
  const useApiServer = configFlagOr(config, 'kubelet_use_api_server', false);
  if (useApiServer && !(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT_HTTPS)) {
    return {
      ok: false,
      reason:
        'kubelet_use_api_server is set but KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT_HTTPS are not (the agent fails the same way)',
    };
  }
  // A token file that is configured, or present, but unreadable fails the whole client, as upstream.
  const tokenPath =
    config.getString('kubelet_auth_token_path') ??
    ((await probes.exists(hostPath(env, SERVICE_ACCOUNT_TOKEN))) ? hostPath(env, SERVICE_ACCOUNT_TOKEN) : undefined);
  let token: string | undefined;
  if (tokenPath) {
    const text = await readOptional(probes, tokenPath);
    if (text === undefined) return { ok: false, reason: `kubelet token ${tokenPath} is set but cannot be read` };
    token = text.trim() || undefined;
  }
  const settings: KubeletSettings = {
    httpsPort: configNumber(config, 'kubernetes_https_kubelet_port', 10250),
    httpPort: configNumber(config, 'kubernetes_http_kubelet_port', 10255),
    tlsVerify: configFlagOr(config, 'kubelet_tls_verify', true),
    useApiServer,
    ...(token ? { token } : {}),
  };
  const caPath =
    config.getString('kubelet_client_ca') ??
    ((await probes.exists(hostPath(env, SERVICE_ACCOUNT_CA))) ? hostPath(env, SERVICE_ACCOUNT_CA) : undefined);
  if (caPath) {
    const ca = await readOptional(probes, caPath);
    if (ca?.includes('-----BEGIN CERTIFICATE-----')) settings.ca = ca;
    else settings.caProblem = `kubelet_client_ca ${caPath} is not a readable PEM certificate`;
  }
  const certPath = config.getString('kubelet_client_crt');
  const keyPath = config.getString('kubelet_client_key');
  if (certPath && keyPath) {
    const [cert, key] = [await readOptional(probes, certPath), await readOptional(probes, keyPath)];
    if (cert && key) settings.clientCert = { cert, key };
    else settings.clientCertProblem = `kubelet_client_crt/kubelet_client_key (${certPath}, ${keyPath}) cannot be read`;
  }
  return { ok: true, settings };
}

export interface KubeletEndpoint {
  scheme: 'https' | 'http';
  host: string;
  port: number;
}

export const describeEndpoint = (e: KubeletEndpoint) => `${e.scheme}://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`;

/** The pod list of a busy node is a few megabytes; this bounds a broken or hostile answer. */
const MAX_KUBELET_BODY = 32 * 1024 * 1024;

export async function kubeletGet(
  endpoint: KubeletEndpoint,
  settings: KubeletSettings,
  path: string,
  timeoutMs: number,
): Promise<SmallAnswer> {
  const common = { hostname: endpoint.host, port: endpoint.port, path, method: 'GET', agent: false as const, timeout: timeoutMs };
  if (endpoint.scheme === 'http') {
    return boundedExchange(
      (onResponse) => httpRequest({ ...common, headers: { Accept: 'application/json' } }, onResponse),
      timeoutMs,
      'kubelet',
      MAX_KUBELET_BODY,
    );
  }
  // Loaded only when a kubelet is asked over HTTPS: TLS costs every other run ~1.6 MiB (docs/architecture.md, "Start-up and memory").
  const { request: httpsRequest } = await import('node:https');
  return boundedExchange(
    (onResponse) =>
      httpsRequest(
        {
          ...common,
          headers: { Accept: 'application/json', ...(settings.token ? { Authorization: `Bearer ${settings.token}` } : {}) },
          // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED can never change what kubelet_tls_verify says.
          rejectUnauthorized: settings.tlsVerify,
          ...(settings.ca ? { ca: settings.ca } : {}),
          ...(settings.clientCert ?? {}),
        },
        onResponse,
      ),
    timeoutMs,
    'kubelet',
    MAX_KUBELET_BODY,
  );
}
