import { request } from 'node:http';
import { boundedExchange, describeFailure } from './bounded-exchange.js';
import { DOCKER_SOCKET, hostPath } from './host-files.js';
import { LookupDeadline } from './lookup-deadline.js';

// The agent's docker hostname provider (pkg/util/docker: GetHostname → DockerUtil.GetHostname):
// the daemon's `Name` from GET /info, over the client the agent builds with client.FromEnv
// (DOCKER_HOST, default unix:///var/run/docker.sock) and API version negotiation (GET /_ping, whose
// API-Version header prefixes the next path). The agent bounds it by docker_query_timeout (5 s);
// this tool by a shorter deadline of its own, as a hostname lookup must stay cheap.

export type DockerAnswer = { ok: true; name: string; endpoint: string } | { ok: false; reason: string };

/** 1 MiB: /info is a few kilobytes, even on a daemon with many plugins and registries. */
const MAX_INFO_BYTES = 1024 * 1024;

type Endpoint = { socketPath: string; label: string } | { host: string; port: number; label: string };

/** DOCKER_HOST as client.FromEnv reads it; undefined + reason when this tool cannot speak it. */
function dockerEndpoint(dockerHost: string | undefined, env: NodeJS.ProcessEnv): Endpoint | { unsupported: string } {
  const value = dockerHost?.trim() || `unix://${hostPath(env, DOCKER_SOCKET)}`;
  const match = /^([a-z]+):\/\/(.*)$/.exec(value);
  if (!match) return { unsupported: `DOCKER_HOST ${value} is not <scheme>://<address>` };
  const [, scheme, address] = match as unknown as [string, string, string];
  if (scheme === 'unix') return address ? { socketPath: address, label: value } : { unsupported: 'DOCKER_HOST unix:// names no socket' };
  if (scheme === 'tcp' || scheme === 'http') {
    // With DOCKER_CERT_PATH the agent speaks TLS with the client certificate found there.
    if (env.DOCKER_CERT_PATH)
      return { unsupported: `DOCKER_HOST ${value} with DOCKER_CERT_PATH (TLS to the daemon) is not supported by this tool` };
    const hostPort = /^\[?([^\]]+?)\]?:(\d+)\/?$/.exec(address);
    if (!hostPort) return { unsupported: `DOCKER_HOST ${value} has no host:port` };
    return { host: hostPort[1]!, port: Number(hostPort[2]), label: value };
  }
  return { unsupported: `DOCKER_HOST scheme ${scheme}:// is not supported by this tool` };
}

function get(endpoint: Endpoint, path: string, timeoutMs: number) {
  const target = 'socketPath' in endpoint ? { socketPath: endpoint.socketPath } : { hostname: endpoint.host, port: endpoint.port };
  return boundedExchange(
    (onResponse) =>
      request(
        { ...target, path, method: 'GET', headers: { Host: 'docker', Accept: 'application/json' }, agent: false, timeout: timeoutMs },
        onResponse,
      ),
    timeoutMs,
    'docker daemon',
    MAX_INFO_BYTES,
  );
}

export async function dockerDaemonName(dockerHost: string | undefined, env: NodeJS.ProcessEnv, deadlineMs: number): Promise<DockerAnswer> {
  const endpoint = dockerEndpoint(dockerHost, env);
  if ('unsupported' in endpoint) return { ok: false, reason: endpoint.unsupported };
  const deadline = new LookupDeadline(deadlineMs);
  const left = () => deadline.budget();
  try {
    // Negotiation: a failed ping leaves the client on its default version; an unversioned path is the daemon's own.
    let prefix = '';
    try {
      const ping = await get(endpoint, '/_ping', left());
      const version = ping.headers['api-version'];
      if (typeof version === 'string' && /^\d+\.\d+$/.test(version)) prefix = `/v${version}`;
    } catch (err) {
      if (/ENOENT|ECONNREFUSED|EACCES|no answer/.test(describeFailure(err))) throw err;
    }
    const info = await get(endpoint, `${prefix}/info`, left());
    if (info.status !== 200) return { ok: false, reason: `${endpoint.label}: GET /info answered HTTP ${info.status}` };
    const body = JSON.parse(info.body) as { Name?: unknown };
    if (typeof body.Name !== 'string') return { ok: false, reason: `${endpoint.label}: /info has no Name` };
    return { ok: true, name: body.Name, endpoint: endpoint.label };
  } catch (err) {
    return {
      ok: false,
      reason: `${endpoint.label}: ${err instanceof SyntaxError ? 'the /info answer is not JSON' : describeFailure(err)}`,
    };
  }
}
