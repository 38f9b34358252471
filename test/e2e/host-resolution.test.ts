import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AgentIpcEmulator, startAgentIpcEmulator } from '../../src/emulators/agent-ipc/index.js';
import { type CloudMetadataEmulator, startCloudMetadataEmulator } from '../../src/emulators/cloud-metadata/index.js';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../src/emulators/enrollment/index.js';
import { parseIdentityFile } from '../../src/identity/index.js';
import { type LocalFixture, localFixture } from './local-fixture.js';

// The built binary on simulated hosts: it must write and report the hostname the Go agent would
// resolve, or the runner discards the rotated identity at its next start (protocol §4).

let fx: LocalFixture;
let cloud: CloudMetadataEmulator;
let ipc: AgentIpcEmulator;
const INSTANCE_ID = 'i-0abc123def4567890';

beforeAll(async () => {
  cloud = await startCloudMetadataEmulator();
  ipc = await startAgentIpcEmulator();
});
afterAll(async () => {
  await cloud.close();
  await ipc.close();
});
beforeEach(async () => {
  fx = await localFixture();
  cloud.set({ ec2: { instanceId: INSTANCE_ID, imdsv2: 'required' } });
  cloud.requests.length = 0;
});
afterEach(() => fx.close());

/** datadog.yaml as an agent install without `hostname` has it. */
async function agentConfig(extra = ''): Promise<void> {
  const yaml = [`api_key: ${DEFAULT_API_KEY}`, `app_key: ${DEFAULT_APP_KEY}`, `dd_url: ${fx.emulator.url}`, 'private_action_runner:', '  enabled: true', extra].join('\n');
  await writeFile(join(fx.dir, 'datadog.yaml'), yaml);
}

const ec2Host = () => ({ PAR_IDENTITY_CLOUD_METADATA_URL: cloud.url, PAR_IDENTITY_OS_HOSTNAME: 'ip-10-0-0-1' });

describe('hostname on a simulated EC2 host (OS name ip-10-0-0-1)', () => {
  it('rotate-identity writes the instance id and says where it came from; status agrees', async () => {
    await agentConfig();
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env: ec2Host() });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ hostname: INSTANCE_ID, hostnameSource: 'EC2 instance id' });
    expect(parseIdentityFile(await fx.read()).hostname).toBe(INSTANCE_ID);
    expect(fx.emulator.requests.at(-1)!.body).toContain(`"agent_hostname":"${INSTANCE_ID}"`);
    expect(fx.emulator.requests.at(-1)!.body).toContain(`"runner_name":"${INSTANCE_ID}-`);
    const status = await fx.run(['status', '-c', fx.dir, '--json'], { env: ec2Host() });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ hostname: INSTANCE_ID, hostnameSource: 'EC2 instance id', agentWouldReEnroll: false, reEnrollReasons: [] });
  });

  it('status says plainly that an identity holding the OS hostname will be discarded', async () => {
    await agentConfig();
    // What an older par-identity wrote there: the OS hostname.
    const old = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { ...ec2Host(), DD_HOSTNAME: 'ip-10-0-0-1' } });
    expect(old.code, old.stderr).toBe(0);
    const status = await fx.run(['status', '-c', fx.dir], { env: ec2Host() });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`hostname:     ${INSTANCE_ID} (EC2 instance id)`);
    expect(status.stdout).toContain(`re-enroll:    YES on next agent start: stored hostname ip-10-0-0-1 differs from the hostname the agent resolves (${INSTANCE_ID})`);
  });
});

describe('hostname in a simulated Pod', () => {
  it('node name + -<cluster_name>, not the Pod name', async () => {
    await agentConfig('cluster_name: Prod_EU');
    const env = {
      PAR_IDENTITY_CLOUD_METADATA_URL: cloud.url,
      PAR_IDENTITY_OS_HOSTNAME: 'datadog-agent-x7k2p',
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      DD_KUBERNETES_KUBELET_NODENAME: 'gke-pool-1-node-a',
    };
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(parseIdentityFile(await fx.read()).hostname).toBe('gke-pool-1-node-a-prod-eu');
    const status = await fx.run(['status', '-c', fx.dir, '--json'], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({ hostname: 'gke-pool-1-node-a-prod-eu', hostnameSource: 'Kubernetes node name + cluster_name', agentWouldReEnroll: false });
    // Not an EC2 default hostname: no instance-id lookup.
    expect(cloud.requests.filter((r) => r.provider === 'ec2')).toEqual([]);
  });

  it('on EKS the node name starts with ip-, so the agent (and this tool) ends on the EC2 instance id', async () => {
    await agentConfig('cluster_name: prod');
    const env = { PAR_IDENTITY_CLOUD_METADATA_URL: cloud.url, KUBERNETES_SERVICE_HOST: '127.0.0.1', DD_KUBERNETES_KUBELET_NODENAME: 'ip-10-0-0-1.ec2.internal' };
    const status = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({ hostname: INSTANCE_ID, hostnameSource: 'EC2 instance id' });
  });
});

describe('hostname from the running agent', () => {
  it('the agent answers on IPC: its hostname wins over the config and the chain', async () => {
    await ipc.writeFiles(fx.dir);
    ipc.set({ hostname: 'i-from-the-agent' });
    await agentConfig(`hostname: from-config\ncmd_host: 127.0.0.1\ncmd_port: ${ipc.port}`);
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env: { PAR_IDENTITY_CLOUD_METADATA_URL: cloud.url } });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ hostname: 'i-from-the-agent', hostnameSource: 'agent IPC' });
    expect(rotated.stdout + rotated.stderr).not.toContain(ipc.token);
  });
});
