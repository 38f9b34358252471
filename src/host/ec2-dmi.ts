import type { AgentConfig } from '../config/agent-config.js';
import type { Ec2InstanceIdFetch } from './cloud-metadata.js';
import { configFlagOr } from './config-values.js';
import { DMI_DIR, hostPath } from './host-files.js';
import type { HostProbes } from './host-probes.js';

// The agent's DMI fallback for the EC2 instance id (pkg/util/ec2/ec2.go instanceIDFetcher, dmi.go
// getInstanceIDFromDMI): when IMDS fails and ec2_imdsv2_transition_payload_enabled is on, a Nitro
// instance still names itself in DMI: board_vendor "Amazon EC2" and board_asset_tag "i-…". Only
// ec2_use_dmi (default true) turns it off. The product/hypervisor UUID checks of dmi.go only tell the
// agent it is on EC2 (inventory metadata); they never give a hostname, so they are not read here.

const DMI_BOARD_VENDOR_EC2 = 'Amazon EC2';

async function dmiValue(probes: HostProbes, env: NodeJS.ProcessEnv, name: string): Promise<string> {
  try {
    // dmi_nix.go trims one trailing newline, nothing else.
    return (await probes.readFile(hostPath(env, `${DMI_DIR}/${name}`))).replace(/\n$/, '');
  } catch {
    return '';
  }
}

export async function instanceIdFromDmi(config: AgentConfig, env: NodeJS.ProcessEnv, probes: HostProbes): Promise<Ec2InstanceIdFetch> {
  if (!configFlagOr(config, 'ec2_use_dmi', true)) return { ok: false, reason: 'DMI: ec2_use_dmi is false' };
  const vendor = await dmiValue(probes, env, 'board_vendor');
  if (vendor !== DMI_BOARD_VENDOR_EC2)
    return { ok: false, reason: `DMI: board vendor is ${vendor ? JSON.stringify(vendor) : 'unknown'}, not ${DMI_BOARD_VENDOR_EC2}` };
  const tag = await dmiValue(probes, env, 'board_asset_tag');
  if (!tag.startsWith('i-')) return { ok: false, reason: `DMI: board_asset_tag ${JSON.stringify(tag)} is not an instance id` };
  return { ok: true, instanceId: tag };
}
