import type { AgentConfig } from '../config/agent-config.js';
import { type AgentEnvironment, detectAgentEnvironment } from './agent-features.js';
import { azureHostname, fetchEc2InstanceId, gceHostname, imdsv2TransitionEnabled, type ProviderResult } from './cloud-metadata.js';
import type { AgentVersionHint } from './cluster-name.js';
import { configFlag } from './config-values.js';
import { type ContainerLimits, containerHostname, DEFAULT_CONTAINER_LIMITS } from './container-hostname.js';
import { instanceIdFromDmi } from './ec2-dmi.js';
import type { HostProbes } from './host-probes.js';
import { hostnameProblem, isEc2DefaultHostname } from './hostname-validation.js';

// The agent's own hostname chain (comp/core/hostname/impl providers.go, provider_callbacks.go,
// container.go), in its order and with its stop/continue rules: config, hostname_file, Fargate, GCE
// and Azure stop on success; FQDN, container, OS and EC2 only refine what earlier providers found.

interface ChainResult {
  hostname: string;
  source: string;
  /** One line per provider that did not give the answer, for --verbose style output and tests. */
  skipped: string[];
}

interface ChainContext {
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
  probes: HostProbes;
  metadataUrl: string;
  /** Deadlines of the docker and kubelet lookups (tests shorten them). */
  containerLimits?: ContainerLimits;
  /** Chooses the cluster_name rule; undefined = the newest. */
  agentVersion?: AgentVersionHint;
}

/** fargate.IsSidecar: ECS Fargate, EKS Fargate, or ECS managed instances in sidecar mode have no hostname. */
async function sidecar(environment: AgentEnvironment): Promise<string | undefined> {
  if (await environment.has('ecsfargate')) return 'Fargate (no hostname)';
  if (await environment.has('eksfargate')) return 'EKS Fargate (no hostname)';
  if (environment.ecsManagedInstances() === 'sidecar') return 'ECS managed instances sidecar (no hostname)';
  return undefined;
}

/** Why the agent would use the EC2 instance id, in its order of tests; undefined = it would not. */
async function ec2Trigger(ctx: ChainContext, environment: AgentEnvironment, current: string): Promise<string | undefined> {
  if (await environment.has('ecsec2')) return ' (ECS)';
  if (environment.ecsManagedInstances() === 'daemon') return ' (ECS managed instances)';
  if (isEc2DefaultHostname(current, configFlag(ctx.config, 'ec2_use_windows_prefix_detection'))) return '';
  if (configFlag(ctx.config, 'ec2_prioritize_instance_id_as_hostname')) return '';
  return undefined;
}

export async function runHostnameChain(ctx: ChainContext): Promise<ChainResult | { failed: true; skipped: string[] }> {
  const { config, probes } = ctx;
  const skipped: string[] = [];
  const stop = (hostname: string, source: string) => ({ hostname, source, skipped });

  // 1. config hostname / DD_HOSTNAME — stop
  const configured = config.getString('hostname');
  if (configured !== undefined) {
    const problem = hostnameProblem(configured);
    if (!problem) return stop(configured, `config hostname (${config.sourceOf('hostname')})`);
    skipped.push(`config hostname: ${problem}`);
  }
  // 2. hostname_file — stop
  const hostnameFile = config.getString('hostname_file');
  if (hostnameFile) {
    try {
      const fromFile = (await probes.readFile(hostnameFile)).trim();
      const problem = hostnameProblem(fromFile);
      if (!problem) return stop(fromFile, `hostname_file ${hostnameFile}`);
      skipped.push(`hostname_file: ${problem}`);
    } catch (err) {
      skipped.push(`hostname_file: cannot read ${hostnameFile} (${(err as NodeJS.ErrnoException).code ?? err})`);
    }
  }
  const environment = detectAgentEnvironment(config, ctx.env, probes);
  skipped.push(...environment.notes);
  // 3. Fargate and other sidecars: no hostname at all — stop
  const sidecarSource = await sidecar(environment);
  if (sidecarSource) return stop('', sidecarSource);
  // 4. GCE — stop; 5. Azure — stop
  const fromCloud = async (result: ProviderResult, source: string) => {
    if (result.ok) return stop(result.hostname, source);
    skipped.push(result.reason);
    return undefined;
  };
  const gce = await fromCloud(await gceHostname(config, ctx.metadataUrl), 'GCE metadata');
  if (gce) return gce;
  const azure = await fromCloud(
    await azureHostname(config, ctx.metadataUrl),
    `Azure metadata (${config.getString('azure_hostname_style')})`,
  );
  if (azure) return azure;

  let hostname = '';
  let source = '';
  const osUsable = configFlag(config, 'hostname_trust_uts_namespace') || (await probes.inHostUtsNamespace()) !== false;
  // 6. FQDN — continue
  if (!configFlag(config, 'hostname_fqdn')) skipped.push('FQDN: hostname_fqdn is off');
  else {
    if (!osUsable) skipped.push('FQDN: not in the host UTS namespace');
    else {
      try {
        hostname = await probes.fqdn();
        source = 'FQDN (hostname_fqdn)';
      } catch (err) {
        skipped.push(`FQDN: ${(err as Error).message}`);
      }
    }
  }
  // 7. container: kube-apiserver (cluster agent only), docker, kubelet — continue
  const container = await containerHostname({
    config,
    env: ctx.env,
    probes,
    environment,
    limits: ctx.containerLimits ?? DEFAULT_CONTAINER_LIMITS,
    ...(ctx.agentVersion ? { agentVersion: ctx.agentVersion } : {}),
  });
  skipped.push(...container.skipped);
  if (container.hostname !== undefined) {
    hostname = container.hostname;
    source = container.source;
  }
  // 8. OS hostname, only when nothing was found and the UTS namespace is the host's — continue
  if (hostname === '') {
    if (osUsable) {
      hostname = probes.osHostname();
      source = 'OS hostname';
    } else skipped.push('OS hostname: not in the host UTS namespace (set hostname_trust_uts_namespace to use it)');
  } else skipped.push(`OS hostname: not used, ${source} already gave one`);
  // 9. EC2 instance id on ECS, on an EC2 default name, or when asked to prefer it — continue
  const trigger = await ec2Trigger(ctx, environment, hostname);
  if (trigger === undefined)
    skipped.push(
      `EC2: not asked (not on ECS, ${JSON.stringify(hostname)} is no EC2 default name, ec2_prioritize_instance_id_as_hostname is off)`,
    );
  else {
    let fetched = await fetchEc2InstanceId(config, ctx.metadataUrl);
    let via = '';
    if (!fetched.ok) {
      skipped.push(fetched.reason);
      if (imdsv2TransitionEnabled(config)) {
        fetched = await instanceIdFromDmi(config, ctx.env, probes);
        if (fetched.ok) via = ' from DMI';
        else skipped.push(fetched.reason);
      }
    }
    if (fetched.ok) {
      const problem = hostnameProblem(fetched.instanceId);
      if (problem) skipped.push(`EC2: instance id ${problem}`);
      else {
        hostname = fetched.instanceId;
        source = `EC2 instance id${via}${trigger}`;
      }
    }
  }
  if (hostname !== '') return { hostname, source, skipped };
  return { failed: true, skipped };
}
