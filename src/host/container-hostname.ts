import type { AgentConfig } from '../config/agent-config.js';
import type { AgentEnvironment } from './agent-features.js';
import type { AgentVersionHint } from './cluster-name.js';
import { type DockerAnswer, dockerDaemonName } from './docker-hostname.js';
import type { HostProbes } from './host-probes.js';
import { hostnameProblem } from './hostname-validation.js';
import { DEFAULT_KUBELET_LIMITS, type KubeletLookupLimits, kubeletHostname } from './kubelet-hostname.js';

// The container provider of the agent's chain (comp/core/hostname/impl/container.go fromContainer):
// only when the agent is containerized (DOCKER_DD_AGENT, set by its image), the first valid answer of
//   1. kube_apiserver — cluster agent only (built with kubeapiserver and without kubelet); a node or
//      standalone runner's agent has a stub that always fails, and the cluster agent never re-enrolls,
//      so it never matters to a rotation: skipped here, with that reason;
//   2. docker — when the docker feature is present: the daemon's Name (no cluster name suffix);
//   3. kubelet — when the kubernetes feature is present: node name [+ -<cluster name>].
// An answer that is not a valid hostname counts as no answer (callContainerProvider).

export interface ContainerLimits {
  dockerMs: number;
  kubelet: KubeletLookupLimits;
}

export const DEFAULT_CONTAINER_LIMITS: ContainerLimits = { dockerMs: 1500, kubelet: DEFAULT_KUBELET_LIMITS };

interface ContainerLookup {
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
  probes: HostProbes;
  environment: AgentEnvironment;
  limits: ContainerLimits;
  agentVersion?: AgentVersionHint;
}

type ContainerHostname = { hostname: string; source: string; skipped: string[] } | { hostname?: undefined; skipped: string[] };

export async function containerHostname(lookup: ContainerLookup): Promise<ContainerHostname> {
  const { environment } = lookup;
  const skipped: string[] = [];
  if (!environment.containerized) return { skipped: ['container: the agent is not containerized (DOCKER_DD_AGENT is not set)'] };
  const kubernetes = await environment.has('kubernetes');
  if (kubernetes) skipped.push('container/kube_apiserver: cluster agent only (a node agent has no such provider)');

  let docker: Promise<DockerAnswer> | undefined;
  const dockerName = () => {
    docker ??= environment.dockerHost().then((host) => dockerDaemonName(host, lookup.env, lookup.limits.dockerMs));
    return docker;
  };

  if (await environment.has('docker')) {
    const answer = await dockerName();
    if (answer.ok) {
      const problem = hostnameProblem(answer.name);
      if (!problem) return { hostname: answer.name, source: 'docker daemon hostname', skipped };
      skipped.push(`container/docker: the daemon's name ${JSON.stringify(answer.name)} is not a valid hostname (${problem})`);
    } else skipped.push(`container/docker: ${answer.reason}`);
  } else skipped.push('container/docker: no docker (DOCKER_HOST unset and no reachable docker socket)');

  if (!kubernetes) {
    skipped.push('container/kubelet: not in Kubernetes (KUBERNETES_SERVICE_PORT and KUBERNETES unset)');
    return { skipped };
  }
  const kubelet = await kubeletHostname({
    config: lookup.config,
    env: lookup.env,
    probes: lookup.probes,
    dockerName,
    limits: lookup.limits.kubelet,
    ...(lookup.agentVersion ? { agentVersion: lookup.agentVersion } : {}),
  });
  skipped.push(...kubelet.notes.map((n) => `container/kubelet: ${n}`));
  if (!kubelet.ok) {
    skipped.push(`container/kubelet: ${kubelet.reason}`);
    return { skipped };
  }
  const problem = hostnameProblem(kubelet.hostname);
  if (problem) {
    skipped.push(`container/kubelet: ${kubelet.hostname} is not a valid hostname (${problem})`);
    return { skipped };
  }
  // The rule that judged cluster_name goes into the source, so both the human output and --json say it.
  const rule = kubelet.clusterRule
    ? kubelet.withCluster
      ? `, ${kubelet.clusterRule}`
      : `; cluster_name ignored, ${kubelet.clusterRule}`
    : '';
  return {
    hostname: kubelet.hostname,
    source: `${kubelet.withCluster ? 'Kubernetes node name (kubelet) + cluster_name' : 'Kubernetes node name (kubelet)'}${rule}`,
    skipped,
  };
}
