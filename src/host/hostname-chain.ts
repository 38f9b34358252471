import type { AgentConfig } from '../config/agent-config.js';
import { azureHostname, ec2InstanceId, gceHostname, type ProviderResult } from './cloud-metadata.js';
import { configFlag } from './config-values.js';
import type { HostProbes } from './host-probes.js';
import { clusterNameSuffix, hostnameProblem, isEc2DefaultHostname } from './hostname-validation.js';

// The agent's own hostname chain (comp/core/hostname, pkg/util/hostname/providers.go), in its
// order and with its stop/continue rules: config, hostname_file, Fargate, GCE and Azure stop on
// success; FQDN, container, OS and EC2 only refine what earlier providers found.

export interface ChainResult {
  hostname: string;
  source: string;
  /** One line per provider that did not give the answer, for --verbose style output and tests. */
  skipped: string[];
}

export interface ChainContext {
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
  probes: HostProbes;
  metadataUrl: string;
}

function isFargate(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.ECS_FARGATE) || env.AWS_EXECUTION_ENV === 'AWS_ECS_FARGATE' || /^(1|true)$/i.test(env.DD_EKS_FARGATE ?? '');
}

/** The node name of a Pod, as the agent's container provider gets it (env or config, not the kubelet API). */
function kubernetesNodeName(ctx: ChainContext): string | undefined {
  if (!ctx.env.KUBERNETES_SERVICE_HOST) return undefined;
  return ctx.config.getString('kubernetes_kubelet_nodename');
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
  // 3. Fargate: no hostname at all — stop
  if (isFargate(ctx.env)) return stop('', 'Fargate (no hostname)');
  // 4. GCE — stop; 5. Azure — stop
  const fromCloud = async (result: ProviderResult, source: string) => {
    if (result.ok) return stop(result.hostname, source);
    skipped.push(result.reason);
    return undefined;
  };
  const gce = await fromCloud(await gceHostname(config, ctx.metadataUrl), 'GCE metadata');
  if (gce) return gce;
  const azure = await fromCloud(await azureHostname(config, ctx.metadataUrl), `Azure metadata (${config.getString('azure_hostname_style')})`);
  if (azure) return azure;

  let hostname = '';
  let source = '';
  const osUsable = configFlag(config, 'hostname_trust_uts_namespace') || (await probes.inHostUtsNamespace()) !== false;
  // 6. FQDN — continue
  if (configFlag(config, 'hostname_fqdn')) {
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
  // 7. container: Kubernetes node name + -<cluster_name> — continue
  const nodeName = kubernetesNodeName(ctx);
  if (nodeName) {
    const cluster = clusterNameSuffix(config.getString('cluster_name'));
    const candidate = cluster ? `${nodeName}-${cluster}` : nodeName;
    const problem = hostnameProblem(candidate);
    if (problem) skipped.push(`Kubernetes node name: ${problem}`);
    else {
      hostname = candidate;
      source = cluster ? 'Kubernetes node name + cluster_name' : 'Kubernetes node name';
    }
  }
  // 8. OS hostname, only when nothing was found and the UTS namespace is the host's — continue
  if (hostname === '') {
    if (osUsable) {
      hostname = probes.osHostname();
      source = 'OS hostname';
    } else skipped.push('OS hostname: not in the host UTS namespace (set hostname_trust_uts_namespace to use it)');
  }
  // 9. EC2 instance id when the name is an EC2 default one, or when asked to prefer it — continue
  const prioritize = configFlag(config, 'ec2_prioritize_instance_id_as_hostname');
  if (prioritize || isEc2DefaultHostname(hostname, configFlag(config, 'ec2_use_windows_prefix_detection'))) {
    const ec2 = await ec2InstanceId(config, ctx.metadataUrl);
    if (ec2.ok) {
      hostname = ec2.hostname;
      source = 'EC2 instance id';
    } else skipped.push(ec2.reason);
  }
  if (hostname !== '') return { hostname, source, skipped };
  return { failed: true, skipped };
}
