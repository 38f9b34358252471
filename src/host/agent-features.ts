import type { AgentConfig } from '../config/agent-config.js';
import { configFlagOr, configList } from './config-values.js';
import { DOCKER_SOCKET, ECS_CONFIG_FILE, HOST_MOUNT_PREFIX, hostPath } from './host-files.js';
import type { HostProbes } from './host-probes.js';

// The agent's environment detection (pkg/config/env: environment.go, environment_containers.go,
// environment_detection.go) for the features its hostname chain asks about. The agent runs it once
// at start-up; the features decide whether the container provider asks docker or the kubelet,
// whether the EC2 instance id is used on ECS, and whether Fargate drops the hostname.

type Feature = 'docker' | 'kubernetes' | 'ecsec2' | 'ecsfargate' | 'eksfargate';

const KNOWN: Feature[] = ['docker', 'kubernetes', 'ecsec2', 'ecsfargate', 'eksfargate'];

/** socketTimeout of environment_containers.go: a docker socket that does not accept within this is not docker. */
const SOCKET_PROBE_MS = 500;

export interface AgentEnvironment {
  /** DOCKER_DD_AGENT is set: the agent's own image says it runs in a container (env.IsContainerized). */
  containerized: boolean;
  has(feature: Feature): Promise<boolean>;
  /** DOCKER_HOST as the agent's docker client sees it (set, or found by the socket probe); undefined = client default. */
  dockerHost(): Promise<string | undefined>;
  /** ECS managed instances (AWS_EXECUTION_ENV=AWS_ECS_MANAGED_INSTANCES) in sidecar or daemon mode (ecs_deployment_mode). */
  ecsManagedInstances(): 'sidecar' | 'daemon' | undefined;
  /** Why detection is off or a feature was removed/added by configuration, for the skip notes. */
  notes: string[];
}

function autoconfigEnabled(config: AgentConfig, env: NodeJS.ProcessEnv, notes: string[]): boolean {
  // The deprecated variables win over the config key, an unparsable one turning detection off.
  for (const name of ['AUTOCONFIG_FROM_ENVIRONMENT', 'AUTCONFIG_FROM_ENVIRONMENT']) {
    const raw = env[name];
    if (raw === undefined) continue;
    const text = raw.trim().toLowerCase();
    if (['1', 't', 'true'].includes(text)) return true;
    if (!['0', 'f', 'false'].includes(text))
      notes.push(`environment detection: ${name}=${JSON.stringify(raw)} is not a boolean; the agent then turns detection off`);
    return false;
  }
  return configFlagOr(config, 'autoconfig_from_environment', true);
}

function isEcsFargate(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.ECS_FARGATE) || env.AWS_EXECUTION_ENV === 'AWS_ECS_FARGATE';
}

export function detectAgentEnvironment(config: AgentConfig, env: NodeJS.ProcessEnv, probes: HostProbes): AgentEnvironment {
  const notes: string[] = [];
  const containerized = Boolean(env.DOCKER_DD_AGENT);
  const enabled = autoconfigEnabled(config, env, notes);
  if (!enabled) notes.push('environment detection is off (autoconfig_from_environment: false): only autoconfig_include_features count');

  const excluded = configList(config, 'autoconfig_exclude_features', [])
    .map((filter) => filter.replace(/^name:/, '').toLowerCase())
    .flatMap((filter) => {
      try {
        return [new RegExp(filter)];
      } catch {
        notes.push(`autoconfig_exclude_features: ${filter} is not a regular expression (ignored, as by the agent)`);
        return [];
      }
    });
  const included = new Set(configList(config, 'autoconfig_include_features', []).map((f) => f.toLowerCase()));

  let ecsFargate = false;
  let eksFargate = false;
  let ecsEc2 = false;
  let ecsConfigChecked: Promise<boolean> | undefined;
  if (enabled) {
    // detectAWSEnvironments: Fargate first, then eks_fargate, then ECS on EC2.
    if (isEcsFargate(env)) ecsFargate = true;
    else if (configFlagOr(config, 'eks_fargate', false)) eksFargate = true;
    else if (
      env.AWS_EXECUTION_ENV === 'AWS_ECS_EC2' ||
      env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI ||
      env.ECS_CONTAINER_METADATA_URI ||
      env.ECS_CONTAINER_METADATA_URI_V4
    )
      ecsEc2 = true;
    else ecsConfigChecked = probes.exists(hostPath(env, ECS_CONFIG_FILE));
  }
  const kubernetes = enabled && (Boolean(env.KUBERNETES_SERVICE_PORT) || Boolean(env.KUBERNETES) || eksFargate);

  let docker: Promise<{ present: boolean; host?: string }> | undefined;
  const detectDocker = async (): Promise<{ present: boolean; host?: string }> => {
    if (!enabled) return { present: false };
    // os.LookupEnv: DOCKER_HOST set, even to "", is docker.
    if (env.DOCKER_HOST !== undefined) return { present: true, host: env.DOCKER_HOST };
    const prefixes = containerized ? ['', HOST_MOUNT_PREFIX] : [''];
    for (const prefix of prefixes) {
      const path = `${prefix}${DOCKER_SOCKET}`;
      if (await probes.socketReachable(hostPath(env, path), SOCKET_PROBE_MS))
        return { present: true, host: `unix://${hostPath(env, path)}` };
    }
    return { present: false };
  };

  const detected = async (feature: Feature): Promise<boolean> => {
    switch (feature) {
      case 'docker':
        docker ??= detectDocker();
        return (await docker).present;
      case 'kubernetes':
        return kubernetes;
      case 'ecsec2':
        return ecsEc2 || (ecsConfigChecked ? await ecsConfigChecked : false);
      case 'ecsfargate':
        return ecsFargate;
      case 'eksfargate':
        return eksFargate;
    }
  };

  return {
    containerized,
    notes,
    async has(feature) {
      // Exclusions apply to what was detected; inclusions add a known feature whatever was detected.
      const found = (await detected(feature)) && !excluded.some((r) => r.test(feature));
      return found || (KNOWN.includes(feature) && included.has(feature));
    },
    async dockerHost() {
      docker ??= detectDocker();
      return (await docker).host;
    },
    ecsManagedInstances() {
      if (env.AWS_EXECUTION_ENV !== 'AWS_ECS_MANAGED_INSTANCES') return undefined;
      return config.getString('ecs_deployment_mode')?.toLowerCase() === 'sidecar' ? 'sidecar' : 'daemon';
    },
  };
}
