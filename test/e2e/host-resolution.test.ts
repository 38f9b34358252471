import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AgentIpcEmulator, startAgentIpcEmulator } from '../../emulators/agent-ipc/index.js';
import { type CloudMetadataEmulator, closedLoopbackUrl, startCloudMetadataEmulator } from '../../emulators/cloud-metadata/index.js';
import { type DockerDaemonEmulator, startDockerDaemonEmulator } from '../../emulators/docker-daemon/index.js';
import { type KubeletEmulator, startKubeletEmulator } from '../../emulators/kubelet/index.js';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../emulators/enrollment/index.js';
import { apiKeyHash } from '../../src/identity/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { type LocalFixture, localFixture } from './local-fixture.js';

// The built binary on simulated hosts: it must write and report the hostname the Go agent would
// resolve, or the runner discards the rotated identity at its next start (docs/protocol.md §4).

let fx: LocalFixture;
let cloud: CloudMetadataEmulator;
let ipc: AgentIpcEmulator;
let kubelet: KubeletEmulator;
let docker: DockerDaemonEmulator;
const INSTANCE_ID = 'i-0abc123def4567890';

beforeAll(async () => {
  [cloud, ipc, kubelet, docker] = await Promise.all([
    startCloudMetadataEmulator(),
    startAgentIpcEmulator(),
    startKubeletEmulator(),
    startDockerDaemonEmulator(),
  ]);
});
afterAll(async () => {
  await Promise.all([cloud.close(), ipc.close(), kubelet.close(), docker.close()]);
});
beforeEach(async () => {
  fx = await localFixture();
  cloud.set({ ec2: { instanceId: INSTANCE_ID, imdsv2: 'required' } });
  cloud.requests.length = 0;
  kubelet.set({ nodeName: 'gke-pool-1-node-a', delayMs: 0, failStatus: 0 });
  kubelet.requests.length = 0;
  docker.set({ name: 'docker-host-1', failStatus: 0 });
  docker.requests.length = 0;
});
afterEach(() => fx.close());

/** datadog.yaml as an agent install without `hostname` has it. */
async function agentConfig(extra = ''): Promise<void> {
  const yaml = [
    `api_key: ${DEFAULT_API_KEY}`,
    `app_key: ${DEFAULT_APP_KEY}`,
    `dd_url: ${fx.emulator.url}`,
    'private_action_runner:',
    '  enabled: true',
    extra,
  ].join('\n');
  await writeFile(join(fx.dir, 'datadog.yaml'), yaml);
}

const NEWEST_RULE = 'agent ≥ 7.78 cluster_name rule (agent version unknown: the newest)';

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
    expect(JSON.parse(status.stdout)).toMatchObject({
      hostname: INSTANCE_ID,
      hostnameSource: 'EC2 instance id',
      agentWouldReEnroll: false,
      reEnrollReasons: [],
    });
  });

  it('--timeout cuts a metadata service that does not answer: HOSTNAME_UNRESOLVED, nothing enrolled, nothing written', async () => {
    // ec2_metadata_timeout of a minute: only --timeout can end the wait.
    await agentConfig('ec2_metadata_timeout: 60000');
    cloud.set({ ec2: { instanceId: INSTANCE_ID, imdsv2: 'required' }, delayMs: { ec2: 120_000 } });
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--timeout', '2s', '--json'], { env: ec2Host() });
    expect(run.code, run.stderr).toBe(3);
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({ code: 'HOSTNAME_UNRESOLVED', exitCode: 3 });
    expect(out.message).toContain('the hostname lookup did not finish before --timeout (2 s)');
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll' || r.route === 'enroll_api_key_only')).toHaveLength(0);
    await expect(fx.read()).rejects.toThrow();
  });

  it('status says plainly that an identity holding the OS hostname will be discarded', async () => {
    await agentConfig();
    // What an older par-identity wrote there: the OS hostname.
    const old = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { ...ec2Host(), DD_HOSTNAME: 'ip-10-0-0-1' } });
    expect(old.code, old.stderr).toBe(0);
    const status = await fx.run(['status', '-c', fx.dir], { env: ec2Host() });
    expect(status.code, status.stderr).toBe(14); // reenrollPredicted: the prediction has its own exit code
    expect(status.stdout).toContain(`hostname:     ${INSTANCE_ID} (EC2 instance id)`);
    expect(status.stdout).toContain(
      `re-enroll:    YES on next agent start: stored hostname ip-10-0-0-1 differs from the hostname the agent resolves (${INSTANCE_ID})`,
    );
  });
});

/** The agent's container in a Pod: its image's DOCKER_DD_AGENT, Kubernetes' variables, the kubelet found as the Helm chart configures it (here on loopback). */
async function podEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const files = await kubelet.writeFiles(fx.dir);
  return {
    PAR_IDENTITY_CLOUD_METADATA_URL: cloud.url,
    PAR_IDENTITY_OS_HOSTNAME: 'datadog-agent-x7k2p',
    DOCKER_DD_AGENT: 'true',
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    KUBERNETES_SERVICE_PORT: '443',
    DD_KUBERNETES_KUBELET_HOST: '127.0.0.1',
    DD_KUBERNETES_HTTPS_KUBELET_PORT: String(kubelet.httpsPort),
    DD_KUBERNETES_HTTP_KUBELET_PORT: '0',
    DD_KUBELET_CLIENT_CA: files.ca,
    DD_KUBELET_AUTH_TOKEN_PATH: files.token,
    ...extra,
  };
}

describe('hostname in a simulated Pod (the kubelet names the node)', () => {
  it('node name from the kubelet + -<cluster_name>, not the Pod name; status agrees, then sees the Pod moved to another node', async () => {
    await agentConfig('cluster_name: prod-eu');
    const env = await podEnv();
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({
      hostname: 'gke-pool-1-node-a-prod-eu',
      hostnameSource: `Kubernetes node name (kubelet) + cluster_name, ${NEWEST_RULE}`,
    });
    expect(parseIdentityFile(await fx.read()).hostname).toBe('gke-pool-1-node-a-prod-eu');
    expect(kubelet.requests.map((r) => `${r.scheme} ${r.path} ${r.status}`)).toEqual(['https /spec 200', 'https /pods 200']);
    expect(kubelet.requests.every((r) => r.authorization === `Bearer ${kubelet.token}`)).toBe(true);
    expect(rotated.stdout + rotated.stderr).not.toContain(kubelet.token);
    const same = await fx.run(['status', '-c', fx.dir, '--json'], { env });
    expect(JSON.parse(same.stdout)).toMatchObject({
      hostname: 'gke-pool-1-node-a-prod-eu',
      agentWouldReEnroll: false,
      reEnrollReasons: [],
    });
    // Not an EC2 default hostname: no instance-id lookup.
    expect(cloud.requests.filter((r) => r.provider === 'ec2')).toEqual([]);

    kubelet.set({ nodeName: 'gke-pool-1-node-b' });
    const moved = await fx.run(['status', '-c', fx.dir], { env });
    expect(moved.code, moved.stderr).toBe(14);
    expect(moved.stdout).toContain(
      `hostname:     gke-pool-1-node-b-prod-eu (Kubernetes node name (kubelet) + cluster_name, ${NEWEST_RULE})`,
    );
    expect(moved.stdout).toContain(
      're-enroll:    YES on next agent start: stored hostname gke-pool-1-node-a-prod-eu differs from the hostname the agent resolves (gke-pool-1-node-b-prod-eu)',
    );
  });

  it('DD_KUBERNETES_KUBELET_NODENAME does not name the host: the kubelet does, as for the agent', async () => {
    await agentConfig('cluster_name: prod');
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], {
      env: await podEnv({ DD_KUBERNETES_KUBELET_NODENAME: 'from-downward-api' }),
    });
    expect(JSON.parse(rotated.stdout)).toMatchObject({
      hostname: 'gke-pool-1-node-a-prod',
      hostnameSource: `Kubernetes node name (kubelet) + cluster_name, ${NEWEST_RULE}`,
    });
  });

  it('a cluster_name the agent refuses (Prod_EU) is left off, as the agent does', async () => {
    await agentConfig('cluster_name: Prod_EU');
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env: await podEnv() });
    expect(JSON.parse(rotated.stdout)).toMatchObject({
      hostname: 'gke-pool-1-node-a',
      hostnameSource: `Kubernetes node name (kubelet); cluster_name ignored, ${NEWEST_RULE}`,
    });
  });

  it('on EKS the node name starts with ip-, so the agent (and this tool) ends on the EC2 instance id', async () => {
    await agentConfig('cluster_name: prod');
    kubelet.set({ nodeName: 'ip-10-0-0-1.ec2.internal' });
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env: await podEnv() });
    expect(JSON.parse(rotated.stdout)).toMatchObject({ hostname: INSTANCE_ID, hostnameSource: 'EC2 instance id' });
  });

  it('no kubelet reachable (its token refused): no node name, the chain goes on (here to the OS hostname), and the token was asked for once', async () => {
    await agentConfig('cluster_name: prod');
    const env = await podEnv();
    await writeFile(env.DD_KUBELET_AUTH_TOKEN_PATH!, 'wrong-token');
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ hostname: 'datadog-agent-x7k2p', hostnameSource: 'OS hostname' });
    expect(kubelet.requests.map((r) => `${r.path} ${r.status}`)).toEqual(['/spec 401']);
  });
});

describe('hostname on a simulated docker host and on ECS', () => {
  it("the agent in a container with the docker socket: the daemon's Name; status agrees", async () => {
    await agentConfig();
    const env = {
      PAR_IDENTITY_CLOUD_METADATA_URL: cloud.url,
      PAR_IDENTITY_OS_HOSTNAME: '3f2a9c1d7b6e',
      DOCKER_DD_AGENT: 'true',
      DOCKER_HOST: docker.dockerHost,
    };
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ hostname: 'docker-host-1', hostnameSource: 'docker daemon hostname' });
    expect(docker.requests.map((r) => r.path)).toEqual(['/_ping', '/v1.47/info']);
    const status = await fx.run(['status', '-c', fx.dir, '--json'], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({
      hostname: 'docker-host-1',
      hostnameSource: 'docker daemon hostname',
      agentWouldReEnroll: false,
    });
  });

  it('ECS on EC2: the instance id, even though the docker name is not an EC2 default one; an identity holding the docker name will be discarded', async () => {
    await agentConfig();
    docker.set({ name: 'ecs-host-7' });
    const env = {
      PAR_IDENTITY_CLOUD_METADATA_URL: cloud.url,
      DOCKER_DD_AGENT: 'true',
      DOCKER_HOST: docker.dockerHost,
      AWS_EXECUTION_ENV: 'AWS_ECS_EC2',
    };
    const old = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { ...env, DD_HOSTNAME: 'ecs-host-7' } });
    expect(old.code, old.stderr).toBe(0);
    const status = await fx.run(['status', '-c', fx.dir, '--json'], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({
      hostname: INSTANCE_ID,
      hostnameSource: 'EC2 instance id (ECS)',
      agentWouldReEnroll: true,
      reEnrollReasons: [`stored hostname ecs-host-7 differs from the hostname the agent resolves (${INSTANCE_ID})`],
    });
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env });
    expect(JSON.parse(rotated.stdout)).toMatchObject({ hostname: INSTANCE_ID, hostnameSource: 'EC2 instance id (ECS)' });
    expect(parseIdentityFile(await fx.read()).hostname).toBe(INSTANCE_ID);
  });

  it('EC2 with IMDS unreachable: the instance id of the DMI board asset tag (a Nitro host, under PAR_IDENTITY_HOST_ROOT)', async () => {
    await agentConfig();
    const root = await mkdtemp(join(tmpdir(), 'par-host-root-'));
    try {
      await mkdir(join(root, 'sys/devices/virtual/dmi/id'), { recursive: true });
      await writeFile(join(root, 'sys/devices/virtual/dmi/id/board_vendor'), 'Amazon EC2\n');
      await writeFile(join(root, 'sys/devices/virtual/dmi/id/board_asset_tag'), `${INSTANCE_ID}\n`);
      const env = {
        PAR_IDENTITY_CLOUD_METADATA_URL: await closedLoopbackUrl(),
        PAR_IDENTITY_OS_HOSTNAME: 'ip-10-0-0-1',
        PAR_IDENTITY_HOST_ROOT: root,
      };
      const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env });
      expect(rotated.code, rotated.stderr).toBe(0);
      expect(JSON.parse(rotated.stdout)).toMatchObject({ hostname: INSTANCE_ID, hostnameSource: 'EC2 instance id from DMI' });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('hostname from the running agent', () => {
  it('the agent answers on IPC: its hostname wins over the config and the chain', async () => {
    await ipc.writeFiles(fx.dir);
    ipc.set({ hostname: 'i-from-the-agent' });
    await agentConfig(`hostname: from-config\ncmd_host: 127.0.0.1\ncmd_port: ${ipc.port}`);
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], {
      env: { PAR_IDENTITY_CLOUD_METADATA_URL: cloud.url },
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ hostname: 'i-from-the-agent', hostnameSource: 'agent IPC' });
    expect(rotated.stdout + rotated.stderr).not.toContain(ipc.token);
  });
});

describe('the cluster_name rule follows the agent version (datadog-agent #47189, 7.78)', () => {
  it('my_cluster: accepted as -my-cluster by 7.78 and when the version is unknown, ignored by 7.77; status predicts the re-enrollment', async () => {
    await agentConfig('cluster_name: my_cluster');
    const env = await podEnv();
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json', '--agent-version', '7.78.0'], { env });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({
      hostname: 'gke-pool-1-node-a-my-cluster',
      hostnameSource: 'Kubernetes node name (kubelet) + cluster_name, agent ≥ 7.78 cluster_name rule (agent 7.78.0 from --agent-version)',
    });
    expect(parseIdentityFile(await fx.read()).hostname).toBe('gke-pool-1-node-a-my-cluster');

    const newest = await fx.run(['status', '-c', fx.dir], { env });
    expect(newest.code, newest.stderr).toBe(0);
    expect(newest.stdout).toContain(
      `hostname:     gke-pool-1-node-a-my-cluster (Kubernetes node name (kubelet) + cluster_name, ${NEWEST_RULE})`,
    );
    expect(newest.stdout).toContain('re-enroll:    no');

    const older = await fx.run(['status', '-c', fx.dir, '--json', '--agent-version', '7.77.0'], { env });
    expect(JSON.parse(older.stdout)).toMatchObject({
      hostname: 'gke-pool-1-node-a',
      hostnameSource:
        'Kubernetes node name (kubelet); cluster_name ignored, agent ≤ 7.77 cluster_name rule (agent 7.77.0 from --agent-version)',
      agentWouldReEnroll: true,
    });
  });

  it('a leading digit (0-prod) is taken from 7.78 on; an upper-case name is still ignored', async () => {
    await agentConfig('cluster_name: 0-prod');
    const env = await podEnv();
    const digit = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json', '--dry-run', '--agent-version', '7.78.2'], {
      env,
    });
    expect(JSON.parse(digit.stdout), digit.stderr).toMatchObject({ hostname: 'gke-pool-1-node-a-0-prod' });
    await agentConfig('cluster_name: My_Cluster');
    const upper = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json', '--dry-run'], { env });
    expect(JSON.parse(upper.stdout), upper.stderr).toMatchObject({ hostname: 'gke-pool-1-node-a' });
  });
});

describe('split mode (private_action_runner.split_enabled): the runner resolves the hostname itself', () => {
  it('the core agent answers on IPC, yet the local chain is what the runner compares; the IPC version picks the rule', async () => {
    await ipc.writeFiles(fx.dir);
    ipc.set({ hostname: 'core-agent-answer', version: { Major: 7, Minor: 78, Patch: 0, Pre: '', Meta: '', Commit: 'abc1234' } });
    ipc.requests.length = 0;
    await agentConfig(`  split_enabled: true\ncluster_name: my_cluster\ncmd_host: 127.0.0.1\ncmd_port: ${ipc.port}`);
    const env = await podEnv();
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env });
    expect(rotated.code, rotated.stderr).toBe(0);
    const out = JSON.parse(rotated.stdout);
    expect(out.hostname).toBe('gke-pool-1-node-a-my-cluster');
    expect(out.hostnameSource).toBe(
      "Kubernetes node name (kubelet) + cluster_name, agent ≥ 7.78 cluster_name rule (agent 7.78.0+commit.abc1234 from agent IPC); split mode: the runner's own chain",
    );
    expect(ipc.requests.map((r) => r.path)).not.toContain('/agent/hostname');
    const status = await fx.run(['status', '-c', fx.dir, '--json'], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({ hostname: 'gke-pool-1-node-a-my-cluster', agentWouldReEnroll: false });
  });
});

describe('ENC[] handles of every setting, in one backend run', () => {
  it('hostname and dd_url from the secrets backend, with the keys, in a single run', async () => {
    const log = join(fx.dir, 'backend-runs.log');
    const backend = join(fx.dir, 'backend');
    const answers = {
      host: { value: 'web-from-vault' },
      ddurl: { value: fx.emulator.url },
      api: { value: DEFAULT_API_KEY },
      app: { value: DEFAULT_APP_KEY },
    };
    await writeFile(
      backend,
      `#!${process.execPath}\nlet input = '';\nprocess.stdin.on('data', (d) => { input += d; });\nprocess.stdin.on('end', () => {\n  require('node:fs').appendFileSync(${JSON.stringify(log)}, input + '\\n');\n  process.stdout.write(${JSON.stringify(JSON.stringify(answers))});\n});\n`,
      { mode: 0o700 },
    );
    const yaml = [
      `secret_backend_command: ${backend}`,
      'api_key: ENC[api]',
      'app_key: ENC[app]',
      'dd_url: ENC[ddurl]',
      'hostname: ENC[host]',
      'private_action_runner:',
      '  enabled: true',
    ].join('\n');
    await writeFile(join(fx.dir, 'datadog.yaml'), yaml);
    const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], {
      env: { PAR_IDENTITY_OS_HOSTNAME: 'os-name' },
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({
      hostname: 'web-from-vault',
      hostnameSource: `config hostname (${join(fx.dir, 'datadog.yaml')} (ENC[] resolved by secret_backend_command))`,
    });
    expect(parseIdentityFile(await fx.read()).hostname).toBe('web-from-vault');
    expect(fx.emulator.requests.at(-1)!.body).toContain('"agent_hostname":"web-from-vault"');
    const runs = (await readFile(log, 'utf8')).trim().split('\n');
    expect(runs).toEqual(['{"secret_backend_timeout":30,"secrets":["api","app","ddurl","host"],"version":"1.1"}']);
  });
});

describe('the running runner process: its DD_* environment is the one it reads', () => {
  /** A /proc under PAR_IDENTITY_HOST_ROOT holding one runner process (the agent's binary path, this user's uid). */
  async function fakeRunner(environ: Record<string, string>): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'par-proc-'));
    const bin = join(root, 'opt/datadog-agent/embedded/bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'privateactionrunner'), '#!/bin/sh\n', { mode: 0o755 });
    const proc = join(root, 'proc/4242');
    await mkdir(proc, { recursive: true });
    await symlink(join(bin, 'privateactionrunner'), join(proc, 'exe'));
    const uid = process.getuid!();
    await writeFile(join(proc, 'status'), `Name:\tprivateactionru\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\n`);
    await writeFile(
      join(proc, 'environ'),
      `${Object.entries(environ)
        .map(([k, v]) => `${k}=${v}`)
        .join('\0')}\0PATH=/usr/bin\0`,
    );
    // Not the runner: another executable with DD_* set is ignored.
    await mkdir(join(root, 'proc/77'), { recursive: true });
    await symlink('/usr/bin/env', join(root, 'proc/77/exe'));
    return root;
  }

  it("a runner value with another outcome stops a rotation before enrolling, naming both (keys by hash); --env-from-runner takes the runner's, --override-agent-settings this shell's", async () => {
    await agentConfig();
    // The runner points at the same emulator (the test hook is one of its DD_* too); its key and hostname are not this shell's.
    const root = await fakeRunner({ DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', DD_API_KEY: DEFAULT_API_KEY, DD_HOSTNAME: 'from-runner' });
    const shellKey = 'shell-api-key-0000000000000000wxyz';
    const env = { PAR_IDENTITY_HOST_ROOT: root, PAR_IDENTITY_OS_HOSTNAME: 'os-name', DD_API_KEY: shellKey };
    const enrolls = () => fx.emulator.requests.filter((r) => r.route === 'enroll').length;
    try {
      const refused = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], { env });
      expect(refused.code, refused.stderr).toBe(3);
      const error = JSON.parse(refused.stdout) as { code: string; message: string; details: { outcomes: string[] } };
      expect(error.code).toBe('AGENT_SETTINGS_MISMATCH');
      expect(error.details.outcomes).toEqual(['API key the runner hashes', 'hostname (runner name and the stored hostname)']);
      expect(error.message).toContain(
        `API key the runner hashes: here api_key_hash ${apiKeyHash(shellKey).slice(0, 12)}… (from env DD_API_KEY); the runner (pid 4242) api_key_hash ${apiKeyHash(DEFAULT_API_KEY).slice(0, 12)}… (from env DD_API_KEY)`,
      );
      expect(error.message).toContain(
        'hostname (runner name and the stored hostname): here os-name (OS hostname); the runner (pid 4242) from-runner (config hostname (env DD_HOSTNAME))',
      );
      expect(refused.stdout + refused.stderr).not.toContain(DEFAULT_API_KEY);
      expect(refused.stdout + refused.stderr).not.toContain(shellKey);
      expect(enrolls()).toBe(0);
      expect(await fx.files()).toEqual(['datadog.yaml']);

      const rotated = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json', '--env-from-runner'], { env });
      expect(rotated.code, rotated.stderr).toBe(0);
      expect(JSON.parse(rotated.stdout)).toMatchObject({ hostname: 'from-runner', hostnameSource: 'config hostname (env DD_HOSTNAME)' });
      expect(rotated.stdout + rotated.stderr).not.toContain(DEFAULT_API_KEY);

      // status reports the same outcomes (it changes nothing), and predicts what this shell's values would do.
      const status = await fx.run(['status', '-c', fx.dir, '--json'], { env });
      const text = status.stdout + status.stderr;
      expect(text).toContain('the running runner reads other settings than this run, with another outcome: API key the runner hashes');
      expect(text).toContain('hostname (runner name and the stored hostname): here os-name');
      expect(text).not.toContain(DEFAULT_API_KEY);
      expect(text).not.toContain(shellKey);
      expect(JSON.parse(status.stdout)).toMatchObject({ hostname: 'os-name', agentWouldReEnroll: true });
      const taken = await fx.run(['status', '-c', fx.dir, '--json', '--env-from-runner'], { env });
      expect(JSON.parse(taken.stdout)).toMatchObject({ hostname: 'from-runner', agentWouldReEnroll: false });

      // --override-agent-settings: this shell's values (here its hostname; the key is the config's, as the runner's), each overridden outcome listed.
      const overridden = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json', '--override-agent-settings'], {
        env: { PAR_IDENTITY_HOST_ROOT: root, PAR_IDENTITY_OS_HOSTNAME: 'os-name' },
      });
      expect(overridden.code, overridden.stderr).toBe(0);
      expect(JSON.parse(overridden.stdout)).toMatchObject({ hostname: 'os-name' });
      expect(overridden.stderr).toContain(
        "warning: --override-agent-settings: overriding the running runner's setting, hostname (runner name and the stored hostname): here os-name (OS hostname); the runner (pid 4242) from-runner",
      );
      expect(overridden.stderr).not.toContain('API key the runner hashes');
      expect(overridden.stdout + overridden.stderr).not.toContain(shellKey);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a DD_SITE in this shell that the runner does not have: the endpoint and region differ, named with both sources', async () => {
    await agentConfig();
    const root = await fakeRunner({ DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' });
    try {
      const refused = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json'], {
        env: { PAR_IDENTITY_HOST_ROOT: root, PAR_IDENTITY_OS_HOSTNAME: 'os-name', DD_SITE: 'datadoghq.eu' },
      });
      expect(refused.code, refused.stderr).toBe(3);
      const error = JSON.parse(refused.stdout) as { code: string; message: string };
      expect(error.code).toBe('AGENT_SETTINGS_MISMATCH');
      expect(error.message).toContain(
        `enrollment endpoint and site region: here ${fx.emulator.url}, site datadoghq.eu (from env DD_SITE), region eu1; the runner (pid 4242) ${fx.emulator.url}, site datadoghq.com (from default), region us1`,
      );
      expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a DD_* difference that changes no outcome is an info line, and the rotation goes on', async () => {
    await agentConfig();
    const root = await fakeRunner({ DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', DD_LOG_LEVEL: 'debug' });
    try {
      const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], {
        env: { PAR_IDENTITY_HOST_ROOT: root, PAR_IDENTITY_OS_HOSTNAME: 'os-name' },
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(
        'the running runner (pid 4242) has another DD_* environment than this one, with the same outcome (endpoint, API key hash, hostname, identity file): DD_LOG_LEVEL is set in the runner only',
      );
      expect(run.stderr).not.toContain('warning');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('--env-from-runner with no runner visible refuses, nothing enrolled', async () => {
    await agentConfig();
    const before = fx.emulator.requests.length;
    const refused = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', '--json', '--env-from-runner'], {
      env: { PAR_IDENTITY_OS_HOSTNAME: 'os-name' },
    });
    expect(refused.code).not.toBe(0);
    expect(JSON.parse(refused.stdout)).toMatchObject({ code: 'RUNNER_ENV_UNAVAILABLE' });
    expect(fx.emulator.requests.length).toBe(before);
  });
});
