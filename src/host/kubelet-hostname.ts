import type { AgentConfig } from '../config/agent-config.js';
import { describeFailure } from './bounded-exchange.js';
import { type AgentVersionHint, clusterNameFor } from './cluster-name.js';
import type { DockerAnswer } from './docker-hostname.js';
import type { HostProbes } from './host-probes.js';
import { describeEndpoint, type KubeletEndpoint, type KubeletSettings, kubeletGet, kubeletSettings } from './kubelet-client.js';
import { LookupDeadline } from './lookup-deadline.js';

// The agent's kubelet hostname provider (pkg/util/kubelet/hostname.go GetHostname, with
// pkg/util/kubernetes/kubelet: kubelet_hosts.go, kubelet_client.go, kubelet.go GetNodename):
//  - where: kubernetes_kubelet_host, then the docker daemon's hostname (no default address at all:
//    with neither, the agent reaches no kubelet);
//  - how: for HTTPS then HTTP, each candidate in turn is checked with GET /spec (anything but a
//    network error or 401 passes); the first that passes is the kubelet;
//  - what: the node name of the first pod of GET /pods with a spec.nodeName, or with
//    kubelet_use_api_server the node.nodeName of GET /stats/summary;
//  - then `<node name>-<cluster name>` (cluster-name.ts).
// The agent waits without a bound here (its 1 s per candidate is not applied); this tool gives each
// request at most a second and the whole lookup a few.

export interface KubeletLookupLimits {
  requestMs: number;
  totalMs: number;
}

export const DEFAULT_KUBELET_LIMITS: KubeletLookupLimits = { requestMs: 1000, totalMs: 3000 };

interface KubeletLookup {
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
  probes: HostProbes;
  /** The docker daemon's name, asked at most once per run (the agent's fallback kubelet host). */
  dockerName(): Promise<DockerAnswer>;
  limits: KubeletLookupLimits;
  /** Chooses the cluster_name rule (docs/protocol.md §4). */
  agentVersion?: AgentVersionHint;
}

type KubeletHostname =
  | { ok: true; hostname: string; withCluster: boolean; clusterRule?: string; notes: string[] }
  | { ok: false; reason: string; notes: string[] };

async function candidateHosts(lookup: KubeletLookup): Promise<{ hosts: string[]; notes: string[] }> {
  const hosts: string[] = [];
  const notes: string[] = [];
  const configured = lookup.config.getString('kubernetes_kubelet_host');
  if (configured) hosts.push(configured.replace(/^\[|\]$/g, ''));
  const docker = await lookup.dockerName();
  if (docker.ok && docker.name && !hosts.includes(docker.name)) hosts.push(docker.name);
  else if (!docker.ok && !configured) notes.push(`kubelet host from docker: ${docker.reason}`);
  return { hosts, notes };
}

/** The first candidate that answers /spec without 401, HTTPS before HTTP, as checkKubeletConnection. */
async function findKubelet(
  hosts: string[],
  settings: KubeletSettings,
  deadline: LookupDeadline,
  requestMs: number,
): Promise<{ endpoint?: KubeletEndpoint; tried: string[] }> {
  const tried: string[] = [];
  const schemes: KubeletEndpoint[] = [];
  if (settings.httpsPort > 0) schemes.push(...hosts.map((host) => ({ scheme: 'https' as const, host, port: settings.httpsPort })));
  if (settings.httpPort > 0) schemes.push(...hosts.map((host) => ({ scheme: 'http' as const, host, port: settings.httpPort })));
  for (const endpoint of schemes) {
    const where = describeEndpoint(endpoint);
    if (settings.clientCertProblem) {
      tried.push(`${where}: ${settings.clientCertProblem}`);
      continue;
    }
    if (endpoint.scheme === 'https' && settings.tlsVerify && settings.caProblem) {
      tried.push(`${where}: ${settings.caProblem}`);
      continue;
    }
    try {
      const spec = await kubeletGet(endpoint, settings, '/spec', deadline.budget(requestMs));
      if (spec.status === 401) {
        tried.push(`${where}/spec: HTTP 401 (${settings.token && endpoint.scheme === 'https' ? 'the token was refused' : 'no token'})`);
        continue;
      }
      return { endpoint, tried };
    } catch (err) {
      tried.push(`${where}/spec: ${describeFailure(err)}`);
      if (/no answer within/.test(String((err as Error).message)) && deadlineOver(deadline)) break;
    }
  }
  return { tried };
}

function deadlineOver(deadline: LookupDeadline): boolean {
  try {
    deadline.budget();
    return false;
  } catch {
    return true;
  }
}

function nodeNameFrom(body: string, useApiServer: boolean): string | undefined {
  const parsed = JSON.parse(body) as unknown;
  if (useApiServer) {
    const node = (parsed as { node?: { nodeName?: unknown } } | null)?.node;
    return typeof node?.nodeName === 'string' && node.nodeName !== '' ? node.nodeName : undefined;
  }
  const items = (parsed as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) return undefined;
  for (const pod of items) {
    const name = (pod as { spec?: { nodeName?: unknown } } | null)?.spec?.nodeName;
    if (typeof name === 'string' && name !== '') return name;
  }
  return undefined;
}

export async function kubeletHostname(lookup: KubeletLookup): Promise<KubeletHostname> {
  const configured = await kubeletSettings(lookup.config, lookup.env, lookup.probes);
  if (!configured.ok) return { ok: false, reason: configured.reason, notes: [] };
  const { settings } = configured;
  if (settings.httpsPort <= 0 && settings.httpPort <= 0)
    return {
      ok: false,
      reason: 'both kubelet ports are disabled (kubernetes_https_kubelet_port, kubernetes_http_kubelet_port ≤ 0)',
      notes: [],
    };
  const { hosts, notes } = await candidateHosts(lookup);
  if (hosts.length === 0)
    return { ok: false, reason: 'no kubelet host: kubernetes_kubelet_host is not set and docker gave no hostname', notes };

  const deadline = new LookupDeadline(lookup.limits.totalMs);
  const found = await findKubelet(hosts, settings, deadline, lookup.limits.requestMs);
  if (!found.endpoint) return { ok: false, reason: `no kubelet reached: ${found.tried.join('; ')}`, notes };
  if (found.tried.length > 0) notes.push(`not reached first: ${found.tried.join('; ')}`);

  const path = settings.useApiServer ? '/stats/summary' : '/pods';
  const where = `${describeEndpoint(found.endpoint)}${path}`;
  let nodeName: string | undefined;
  try {
    const answer = await kubeletGet(found.endpoint, settings, path, deadline.budget(lookup.limits.requestMs));
    if (answer.status !== 200) return { ok: false, reason: `${where}: HTTP ${answer.status}`, notes };
    nodeName = nodeNameFrom(answer.body, settings.useApiServer);
  } catch (err) {
    return { ok: false, reason: `${where}: ${err instanceof SyntaxError ? 'the answer is not JSON' : describeFailure(err)}`, notes };
  }
  if (!nodeName) return { ok: false, reason: `${where}: no node name in the answer`, notes };

  const cluster = clusterNameFor(lookup.config, nodeName, lookup.agentVersion);
  notes.push(...cluster.notes);
  return {
    ok: true,
    hostname: cluster.name ? `${nodeName}-${cluster.name}` : nodeName,
    withCluster: Boolean(cluster.name),
    ...(cluster.rule ? { clusterRule: cluster.rule } : {}),
    notes,
  };
}
