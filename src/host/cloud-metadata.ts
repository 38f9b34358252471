import type { AgentConfig } from '../config/agent-config.js';
import { describeFailure } from './bounded-exchange.js';
import { configFlag, configFlagOr, configList, configNumber, DEFAULT_CLOUD_PROVIDERS } from './config-values.js';
import { hostnameProblem, MAX_HOSTNAME_LENGTH } from './hostname-validation.js';
import { metadataRequest } from './metadata-http.js';

// The three cloud providers of the agent's hostname chain, each gated by cloud_provider_metadata
// (case-insensitive names "aws", "gcp", "azure") and bounded by its own timeout, as upstream.

export type ProviderResult = { ok: true; hostname: string } | { ok: false; reason: string };

function cloudProviderEnabled(config: AgentConfig, name: 'aws' | 'gcp' | 'azure'): boolean {
  return configList(config, 'cloud_provider_metadata', DEFAULT_CLOUD_PROVIDERS).some((p) => p.toLowerCase() === name);
}

function bounded(body: string, what: string): ProviderResult {
  if (body.length === 0) return { ok: false, reason: `${what}: empty answer` };
  if (body.length > MAX_HOSTNAME_LENGTH) return { ok: false, reason: `${what}: answer longer than ${MAX_HOSTNAME_LENGTH} characters` };
  return { ok: true, hostname: body };
}

export async function gceHostname(config: AgentConfig, baseUrl: string): Promise<ProviderResult> {
  if (!cloudProviderEnabled(config, 'gcp')) return { ok: false, reason: 'GCE: disabled by cloud_provider_metadata' };
  const timeout = configNumber(config, 'gce_metadata_timeout', 1000);
  try {
    const res = await metadataRequest('GET', `${baseUrl}/computeMetadata/v1/instance/hostname`, { 'Metadata-Flavor': 'Google' }, timeout);
    if (res.status !== 200) return { ok: false, reason: `GCE: HTTP ${res.status}` };
    // Upstream checks length and emptiness only, not the RFC 1123 rules.
    return bounded(res.body, 'GCE');
  } catch (err) {
    return { ok: false, reason: `GCE: ${describeFailure(err)}` };
  }
}

export async function azureHostname(config: AgentConfig, baseUrl: string): Promise<ProviderResult> {
  const style = config.getString('azure_hostname_style') ?? 'os';
  if (style === 'os') return { ok: false, reason: 'Azure: azure_hostname_style is os' };
  if (!['vmid', 'name', 'name_and_resource_group', 'full'].includes(style))
    return { ok: false, reason: `Azure: invalid azure_hostname_style ${style}` };
  if (!cloudProviderEnabled(config, 'azure')) return { ok: false, reason: 'Azure: disabled by cloud_provider_metadata' };
  let meta: Record<string, unknown>;
  try {
    // Upstream uses a fixed 300 ms here (azure_metadata_timeout is not read by the hostname provider).
    const res = await metadataRequest('GET', `${baseUrl}/metadata/instance/compute?api-version=2017-08-01`, { Metadata: 'true' }, 300);
    if (res.status !== 200) return { ok: false, reason: `Azure: HTTP ${res.status}` };
    meta = JSON.parse(res.body) as Record<string, unknown>;
  } catch (err) {
    return { ok: false, reason: `Azure: ${describeFailure(err)}` };
  }
  // Go's encoding/json matches field names case-insensitively: vmId fills VMID.
  const field = (name: string) => {
    const key = Object.keys(meta).find((k) => k.toLowerCase() === name.toLowerCase());
    return key && typeof meta[key] === 'string' ? (meta[key] as string) : '';
  };
  const name =
    style === 'vmid'
      ? field('vmid')
      : style === 'name'
        ? field('name')
        : style === 'name_and_resource_group'
          ? `${field('name')}.${field('resourceGroupName')}`
          : `${field('name')}.${field('resourceGroupName')}.${field('subscriptionId')}`;
  const problem = hostnameProblem(name);
  return problem ? { ok: false, reason: `Azure: ${problem}` } : { ok: true, hostname: name };
}

export type Ec2InstanceIdFetch = { ok: true; instanceId: string } | { ok: false; reason: string };

/**
 * The EC2 instance id from IMDS, not yet validated (pkg/util/ec2 getMetadataItemWithMaxLength). IMDSv2
 * (a session token) is tried first when ec2_prefer_imdsv2 or ec2_imdsv2_transition_payload_enabled
 * (default true in current agents) is on, falling back to IMDSv1 when the token cannot be had, as
 * upstream does. A failure here (disabled, unreachable, not 200, too long) is what lets the agent
 * fall back on DMI (ec2-dmi.ts); an empty or invalid id is not a failure of this step.
 */
export async function fetchEc2InstanceId(config: AgentConfig, baseUrl: string): Promise<Ec2InstanceIdFetch> {
  if (!cloudProviderEnabled(config, 'aws')) return { ok: false, reason: 'EC2: disabled by cloud_provider_metadata' };
  const timeout = configNumber(config, 'ec2_metadata_timeout', 300);
  const headers: Record<string, string> = {};
  if (configFlag(config, 'ec2_prefer_imdsv2') || imdsv2TransitionEnabled(config)) {
    const ttl = configNumber(config, 'ec2_metadata_token_lifetime', 21600);
    try {
      const res = await metadataRequest(
        'PUT',
        `${baseUrl}/latest/api/token`,
        { 'X-aws-ec2-metadata-token-ttl-seconds': String(ttl) },
        timeout,
      );
      if (res.status === 200 && res.body) headers['X-aws-ec2-metadata-token'] = res.body;
    } catch {
      // no token: IMDSv1 below, as upstream
    }
  }
  try {
    const res = await metadataRequest('GET', `${baseUrl}/latest/meta-data/instance-id`, headers, timeout);
    if (res.status !== 200) return { ok: false, reason: `EC2: HTTP ${res.status}` };
    const max = configNumber(config, 'metadata_endpoints_max_hostname_size', MAX_HOSTNAME_LENGTH);
    if (res.body.length > max) return { ok: false, reason: `EC2: answer longer than ${max} characters` };
    return { ok: true, instanceId: res.body };
  } catch (err) {
    return { ok: false, reason: `EC2: ${describeFailure(err)}` };
  }
}

/** ec2_imdsv2_transition_payload_enabled, default true: IMDSv2 first, and DMI when IMDS fails. */
export function imdsv2TransitionEnabled(config: AgentConfig): boolean {
  return configFlagOr(config, 'ec2_imdsv2_transition_payload_enabled', true);
}
