import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { type CloudMetadataEmulator, closedLoopbackUrl, startCloudMetadataEmulator } from '../../emulators/cloud-metadata/index.js';
import { type DockerDaemonEmulator, startDockerDaemonEmulator } from '../../emulators/docker-daemon/index.js';
import { type KubeletEmulator, startKubeletEmulator } from '../../emulators/kubelet/index.js';
import type { ContainerLimits } from '../../src/host/container-hostname.js';
import { resolveHost } from '../../src/host/index.js';
import { type HostProbes, systemProbes } from '../../src/host/host-probes.js';

// The providers of the agent's chain beyond the cloud ones (container: docker, kubelet; EC2 on ECS;
// EC2 from DMI), called through resolveHost against loopback emulators; the rest of the host is fake.

let dir: string;
let cloud: CloudMetadataEmulator;
let kubelet: KubeletEmulator;
let docker: DockerDaemonEmulator;
let files: { token: string; ca: string };

beforeAll(async () => {
  [cloud, kubelet, docker] = await Promise.all([
    startCloudMetadataEmulator(),
    startKubeletEmulator({ nodeName: 'node-a', readOnlyPort: true }),
    startDockerDaemonEmulator({ name: 'docker-host-1' }),
  ]);
});
afterAll(() => Promise.all([cloud.close(), kubelet.close(), docker.close()]));
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-providers-'));
  files = await kubelet.writeFiles(dir);
  cloud.set({});
  cloud.requests.length = 0;
  kubelet.set({ nodeName: 'node-a', pods: ['datadog-agent-x7k2p', 'web-1'], delayMs: 0, failStatus: 0, podsBody: undefined });
  kubelet.requests.length = 0;
  docker.set({ name: 'docker-host-1', delayMs: 0, failStatus: 0 });
  docker.requests.length = 0;
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A container of a Pod: not the host's UTS namespace; real files under the test directory, virtual ones (DMI, …) from `virtual`. */
function podProbes(virtual: Record<string, string> = {}, over: Partial<HostProbes> = {}): HostProbes {
  return {
    osHostname: () => 'datadog-agent-x7k2p',
    fqdn: async () => 'datadog-agent-x7k2p.cluster.local',
    inHostUtsNamespace: async () => false,
    async readFile(path) {
      if (path in virtual) return virtual[path]!;
      if (path.startsWith(dir)) return readFile(path, 'utf8');
      throw Object.assign(new Error(`ENOENT ${path}`), { code: 'ENOENT' });
    },
    exists: async (path) => path in virtual || path.startsWith(dir),
    socketReachable: async () => false,
    ...over,
  };
}

interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  probes?: HostProbes;
  metadataUrl?: string;
  limits?: ContainerLimits;
  agentVersion?: string;
}

async function resolve(yaml: string, opts: ResolveOptions = {}) {
  await writeFile(join(dir, 'datadog.yaml'), yaml);
  const env = { PAR_IDENTITY_CLOUD_METADATA_URL: opts.metadataUrl ?? cloud.url, ...opts.env };
  const config = await loadAgentConfig({ cfgPath: dir, env });
  return resolveHost(config, {
    env,
    probes: opts.probes ?? podProbes(),
    ...(opts.limits ? { containerLimits: opts.limits } : {}),
    ...(opts.agentVersion ? { agentVersion: opts.agentVersion } : {}),
  });
}

const POD_ENV = { DOCKER_DD_AGENT: 'true', KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
const kubeletYaml = (extra = '') =>
  [
    'kubernetes_kubelet_host: 127.0.0.1',
    `kubernetes_https_kubelet_port: ${kubelet.httpsPort}`,
    'kubernetes_http_kubelet_port: 0',
    `kubelet_client_ca: ${files.ca}`,
    `kubelet_auth_token_path: ${files.token}`,
    extra,
  ].join('\n');
const FAST: ContainerLimits = { dockerMs: 300, kubelet: { requestMs: 150, totalMs: 400 } };

describe('container provider: when the agent asks at all', () => {
  it('not containerized (no DOCKER_DD_AGENT): neither docker nor the kubelet is asked, even in a Pod', async () => {
    const r = await resolve(kubeletYaml(), {
      env: { KUBERNETES_SERVICE_PORT: '443', DOCKER_HOST: docker.dockerHost },
      probes: podProbes({}, { inHostUtsNamespace: async () => true }),
    });
    expect(r).toMatchObject({ hostname: 'datadog-agent-x7k2p', source: 'OS hostname' });
    expect(r.notes).toContain('container: the agent is not containerized (DOCKER_DD_AGENT is not set)');
    expect(kubelet.requests).toEqual([]);
    expect(docker.requests).toEqual([]);
  });

  it('a plain host (no DOCKER_DD_AGENT, no Kubernetes, no ECS): no docker socket is probed, no daemon or kubelet asked', async () => {
    const probed: string[] = [];
    const probes = podProbes(
      {},
      {
        inHostUtsNamespace: async () => true,
        osHostname: () => 'web-7',
        socketReachable: async (path) => {
          probed.push(path);
          return false;
        },
      },
    );
    const r = await resolve(kubeletYaml(), { probes });
    expect(r).toMatchObject({ hostname: 'web-7', source: 'OS hostname' });
    expect(probed).toEqual([]);
    expect([...kubelet.requests, ...docker.requests]).toEqual([]);
    expect(r.notes).toContain('EC2: not asked (not on ECS, "web-7" is no EC2 default name, ec2_prioritize_instance_id_as_hostname is off)');
  });

  it('container is a "continue" provider after FQDN: the docker name replaces the FQDN, and the OS hostname is then not used', async () => {
    const r = await resolve('hostname_fqdn: true\n', {
      env: { DOCKER_DD_AGENT: 'true', DOCKER_HOST: docker.dockerHost },
      probes: podProbes({}, { inHostUtsNamespace: async () => true }),
    });
    expect(r).toMatchObject({ hostname: 'docker-host-1', source: 'docker daemon hostname' });
    expect(r.notes).toContain('OS hostname: not used, docker daemon hostname already gave one');
  });

  it('Kubernetes is KUBERNETES_SERVICE_PORT or KUBERNETES, as the agent detects it; KUBERNETES_SERVICE_HOST alone is not', async () => {
    const hostOnly = await resolve(kubeletYaml(), {
      env: { DOCKER_DD_AGENT: 'true', KUBERNETES_SERVICE_HOST: '127.0.0.1' },
      probes: podProbes({}, { inHostUtsNamespace: async () => true }),
    });
    expect(hostOnly.source).toBe('OS hostname');
    expect(hostOnly.notes).toContain('container/kubelet: not in Kubernetes (KUBERNETES_SERVICE_PORT and KUBERNETES unset)');
    expect(kubelet.requests).toEqual([]);
    expect((await resolve(kubeletYaml(), { env: { DOCKER_DD_AGENT: 'true', KUBERNETES: 'yes' } })).hostname).toBe('node-a');
  });

  it('autoconfig_exclude_features removes a feature, autoconfig_include_features adds one, autoconfig_from_environment: false detects none', async () => {
    await expect(resolve(kubeletYaml('autoconfig_exclude_features: ["name:kube.*"]'), { env: POD_ENV })).rejects.toMatchObject({
      details: { tried: expect.arrayContaining(['container/kubelet: not in Kubernetes (KUBERNETES_SERVICE_PORT and KUBERNETES unset)']) },
    });
    expect(kubelet.requests).toEqual([]);
    expect((await resolve(kubeletYaml('autoconfig_include_features: [kubernetes]'), { env: { DOCKER_DD_AGENT: 'true' } })).hostname).toBe(
      'node-a',
    );
    await expect(resolve(kubeletYaml('autoconfig_from_environment: false'), { env: POD_ENV })).rejects.toMatchObject({
      code: 'HOSTNAME_UNRESOLVED',
    });
  });
});

describe('container provider: kubelet', () => {
  it('asks the kubelet over HTTPS with the token: /spec, then the node name of /pods, + -<cluster_name>', async () => {
    const r = await resolve(kubeletYaml('cluster_name: prod-eu'), { env: POD_ENV });
    expect(r).toMatchObject({
      hostname: 'node-a-prod-eu',
      source: 'Kubernetes node name (kubelet) + cluster_name, agent ≥ 7.78 cluster_name rule (agent version unknown: the newest)',
    });
    expect(kubelet.requests.map((q) => `${q.scheme} ${q.path} ${q.status}`)).toEqual(['https /spec 200', 'https /pods 200']);
    expect(kubelet.requests.every((q) => q.authorization === `Bearer ${kubelet.token}`)).toBe(true);
  });

  it('kubernetes_kubelet_nodename is not what the agent names the host by: the kubelet is', async () => {
    const r = await resolve(kubeletYaml(), { env: { ...POD_ENV, DD_KUBERNETES_KUBELET_NODENAME: 'from-downward-api' } });
    expect(r).toMatchObject({ hostname: 'node-a', source: 'Kubernetes node name (kubelet)' });
  });

  it('the first pod with a spec.nodeName names the node; no such pod, or not JSON, is no answer', async () => {
    kubelet.set({ podsBody: JSON.stringify({ kind: 'PodList', items: [null, { spec: {} }, { spec: { nodeName: 'node-z' } }] }) });
    expect((await resolve(kubeletYaml(), { env: POD_ENV })).hostname).toBe('node-z');
    kubelet.set({ podsBody: JSON.stringify({ kind: 'PodList', items: [] }) });
    await expect(resolve(kubeletYaml(), { env: POD_ENV })).rejects.toMatchObject({
      details: { tried: expect.arrayContaining([expect.stringMatching(/\/pods: no node name in the answer$/)]) },
    });
    kubelet.set({ podsBody: '<html>' });
    await expect(resolve(kubeletYaml(), { env: POD_ENV })).rejects.toMatchObject({
      details: { tried: expect.arrayContaining([expect.stringMatching(/\/pods: the answer is not JSON$/)]) },
    });
  });

  it('a cluster_name the agent would refuse (upper case, _) is ignored, not fixed; none at all gives the plain node name', async () => {
    const invalid = await resolve(kubeletYaml('cluster_name: Prod_EU'), { env: POD_ENV });
    expect(invalid).toMatchObject({
      hostname: 'node-a',
      source: 'Kubernetes node name (kubelet); cluster_name ignored, agent ≥ 7.78 cluster_name rule (agent version unknown: the newest)',
    });
    expect(invalid.notes.join('\n')).toMatch(/cluster_name "Prod_EU" is ignored, as by the agent/);
    const none = await resolve(kubeletYaml(), { env: POD_ENV });
    expect(none.notes.join('\n')).toMatch(/may still append a cluster name it discovers/);
    const long = await resolve(kubeletYaml(`cluster_name: ${'c'.repeat(250)}`), { env: POD_ENV });
    expect(long.hostname).toBe('node-a');
    expect(long.notes.join('\n')).toMatch(/would be longer than 255 characters/);
  });

  it.each<[string, string | undefined, string]>([
    ['my_cluster', '7.78.0', 'node-a-my-cluster'],
    ['my_cluster', undefined, 'node-a-my-cluster'],
    ['0-prod', '7.78.1', 'node-a-0-prod'],
    ['my_cluster', '7.77.2', 'node-a'],
    ['0-prod', '7.66.0+commit.abc1234', 'node-a'],
    ['My-Cluster', '7.78.0', 'node-a'],
    ['prod_', '7.78.0', 'node-a'],
  ])('cluster_name %s with agent %s (docs/protocol.md §4): %s', async (name, version, hostname) => {
    const r = await resolve(kubeletYaml(`cluster_name: ${name}`), { env: POD_ENV, ...(version ? { agentVersion: version } : {}) });
    expect(r.hostname).toBe(hostname);
    expect(r.source).toContain(version === undefined ? 'agent version unknown: the newest' : `agent ${version} from --agent-version`);
    expect(r.source).toContain(version && /^7\.(6|77)/.test(version) ? 'agent ≤ 7.77 cluster_name rule' : 'agent ≥ 7.78 cluster_name rule');
  });

  it('kubelet_use_api_server: the node name of /stats/summary (and the API server variables are required)', async () => {
    kubelet.set({ nodeName: 'node-s' });
    const env = { ...POD_ENV, KUBERNETES_SERVICE_PORT_HTTPS: '443' };
    expect((await resolve(kubeletYaml('kubelet_use_api_server: true'), { env })).hostname).toBe('node-s');
    expect(kubelet.requests.map((q) => q.path)).toEqual(['/spec', '/stats/summary']);
    await expect(resolve(kubeletYaml('kubelet_use_api_server: true'), { env: POD_ENV })).rejects.toMatchObject({
      details: { tried: expect.arrayContaining([expect.stringMatching(/KUBERNETES_SERVICE_PORT_HTTPS are not/)]) },
    });
  });

  it('a refused token (401) fails HTTPS; the read-only HTTP port is then tried, and the token is never sent over it', async () => {
    await writeFile(files.token, 'not-the-token');
    const httpsOnly = resolve(kubeletYaml(), { env: POD_ENV });
    await expect(httpsOnly).rejects.toMatchObject({
      details: {
        tried: expect.arrayContaining([expect.stringMatching(/https:\/\/127\.0\.0\.1:\d+\/spec: HTTP 401 \(the token was refused\)/)]),
      },
    });
    kubelet.requests.length = 0;
    const r = await resolve(kubeletYaml().replace('kubernetes_http_kubelet_port: 0', `kubernetes_http_kubelet_port: ${kubelet.httpPort}`), {
      env: POD_ENV,
    });
    expect(r.hostname).toBe('node-a');
    expect(kubelet.requests.map((q) => `${q.scheme} ${q.path} ${q.status}`)).toEqual([
      'https /spec 401',
      'http /spec 200',
      'http /pods 200',
    ]);
    expect(kubelet.requests.filter((q) => q.scheme === 'http').every((q) => q.authorization === undefined)).toBe(true);
  });

  it('an unreadable token file fails the kubelet client as a whole, before any request', async () => {
    await rm(files.token);
    await expect(resolve(kubeletYaml(), { env: POD_ENV })).rejects.toMatchObject({
      details: { tried: expect.arrayContaining([expect.stringMatching(/kubelet token .* cannot be read/)]) },
    });
    expect(kubelet.requests).toEqual([]);
  });

  it('TLS: a kubelet certificate not signed by kubelet_client_ca fails before the token is sent; kubelet_tls_verify: false accepts it', async () => {
    const other = join(dir, 'other-ca.crt');
    await writeFile(
      other,
      (await (await import('../../emulators/self-signed-cert.js')).selfSignedCert({ subject: '/CN=other', extendedKeyUsage: 'serverAuth' }))
        .cert,
    );
    const yaml = kubeletYaml().replace(files.ca, other);
    await expect(resolve(yaml, { env: POD_ENV })).rejects.toMatchObject({
      details: {
        tried: expect.arrayContaining([
          expect.stringMatching(/\/spec: (SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/),
        ]),
      },
    });
    expect(kubelet.requests).toEqual([]);
    expect((await resolve(`${yaml}\nkubelet_tls_verify: false`, { env: POD_ENV })).hostname).toBe('node-a');
  });

  it('a kubelet_client_ca that cannot be read fails HTTPS when verifying, as upstream', async () => {
    const yaml = kubeletYaml().replace(files.ca, join(dir, 'missing.crt'));
    await expect(resolve(yaml, { env: POD_ENV })).rejects.toMatchObject({
      details: { tried: expect.arrayContaining([expect.stringMatching(/missing\.crt is not a readable PEM/)]) },
    });
    expect((await resolve(`${yaml}\nkubelet_tls_verify: false`, { env: POD_ENV })).hostname).toBe('node-a');
  });

  it('without kubelet_client_ca / kubelet_auth_token_path, the service account CA and token of the Pod are used', async () => {
    const root = join(dir, 'root');
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'token'), kubelet.token);
    await writeFile(join(sa, 'ca.crt'), kubelet.caPem);
    const yaml = kubeletYaml()
      .split('\n')
      .filter((l) => !/kubelet_client_ca|kubelet_auth_token_path/.test(l))
      .join('\n');
    const env = { ...POD_ENV, PAR_IDENTITY_HOST_ROOT: root };
    expect((await resolve(yaml, { env })).hostname).toBe('node-a');
    expect(kubelet.requests[0]!.authorization).toBe(`Bearer ${kubelet.token}`);
  });

  it('a kubelet that does not answer in time is abandoned; the chain goes on', async () => {
    kubelet.set({ delayMs: 5000 });
    await expect(resolve(kubeletYaml(), { env: POD_ENV, limits: FAST })).rejects.toMatchObject({
      details: { tried: expect.arrayContaining([expect.stringMatching(/\/spec: no answer within 150 ms/)]) },
    });
  });

  it('no kubelet host (kubernetes_kubelet_host unset, no docker): no request at all', async () => {
    const yaml = kubeletYaml().replace('kubernetes_kubelet_host: 127.0.0.1', '');
    await expect(resolve(yaml, { env: POD_ENV })).rejects.toMatchObject({
      details: {
        tried: expect.arrayContaining([
          'container/kubelet: no kubelet host: kubernetes_kubelet_host is not set and docker gave no hostname',
        ]),
      },
    });
    expect(kubelet.requests).toEqual([]);
  });

  it("without kubernetes_kubelet_host the docker daemon's name is the kubelet host, as upstream", async () => {
    docker.set({ name: '127.0.0.1' });
    const yaml = `${kubeletYaml().replace('kubernetes_kubelet_host: 127.0.0.1', '')}\nautoconfig_exclude_features: [docker]`;
    const r = await resolve(yaml, { env: { ...POD_ENV, DOCKER_HOST: docker.dockerHost } });
    expect(r).toMatchObject({ hostname: 'node-a', source: 'Kubernetes node name (kubelet)' });
    expect(r.notes).toContain('container/docker: no docker (DOCKER_HOST unset and no reachable docker socket)');
    expect(docker.requests.map((q) => q.path)).toEqual(['/_ping', '/v1.47/info']);
  });

  it('a 403 on /pods (RBAC) is no answer', async () => {
    kubelet.set({ failStatus: 403 });
    await expect(resolve(kubeletYaml(), { env: POD_ENV })).rejects.toMatchObject({
      details: { tried: expect.arrayContaining([expect.stringMatching(/\/pods: HTTP 403$/)]) },
    });
  });
});

describe('container provider: docker, and the order docker → kubelet', () => {
  it("DOCKER_HOST=unix://…: the daemon's Name, after API version negotiation", async () => {
    const r = await resolve('', { env: { DOCKER_DD_AGENT: 'true', DOCKER_HOST: docker.dockerHost } });
    expect(r).toMatchObject({ hostname: 'docker-host-1', source: 'docker daemon hostname' });
    expect(docker.requests.map((q) => q.path)).toEqual(['/_ping', '/v1.47/info']);
  });

  it('DOCKER_HOST=tcp://127.0.0.1:PORT', async () => {
    const tcp = await startDockerDaemonEmulator({ name: 'tcp-host', tcp: true });
    try {
      expect((await resolve('', { env: { DOCKER_DD_AGENT: 'true', DOCKER_HOST: tcp.dockerHost } })).hostname).toBe('tcp-host');
    } finally {
      await tcp.close();
    }
  });

  it('no DOCKER_HOST: the socket the agent probes (/var/run/docker.sock, then /host/… in a container) when it accepts a connection', async () => {
    const root = join(dir, 'root');
    await mkdir(join(root, 'host/var/run'), { recursive: true });
    const hostSocket = await startDockerDaemonEmulator({ name: 'from-host-mount', socketDir: join(root, 'host/var/run') });
    try {
      const env = { DOCKER_DD_AGENT: 'true', PAR_IDENTITY_HOST_ROOT: root };
      const r = await resolve('', { env, probes: podProbes({}, { socketReachable: systemProbes(env).socketReachable }) });
      expect(r).toMatchObject({ hostname: 'from-host-mount', source: 'docker daemon hostname' });
    } finally {
      await hostSocket.close();
    }
  });

  it('docker comes before the kubelet: its name wins, without a cluster name, and the kubelet is not asked', async () => {
    const r = await resolve(kubeletYaml('cluster_name: prod'), { env: { ...POD_ENV, DOCKER_HOST: docker.dockerHost } });
    expect(r).toMatchObject({ hostname: 'docker-host-1', source: 'docker daemon hostname' });
    expect(kubelet.requests).toEqual([]);
  });

  it('a daemon name that is not a valid hostname, a failing or a slow daemon: the kubelet decides', async () => {
    const env = { ...POD_ENV, DOCKER_HOST: docker.dockerHost };
    docker.set({ name: 'bad_name' });
    const invalid = await resolve(kubeletYaml(), { env });
    expect(invalid.hostname).toBe('node-a');
    expect(invalid.notes).toContain(
      'container/docker: the daemon\'s name "bad_name" is not a valid hostname (it is not RFC 1123 compliant)',
    );
    docker.set({ name: 'docker-host-1', failStatus: 500 });
    expect((await resolve(kubeletYaml(), { env })).notes.join('\n')).toMatch(
      /container\/docker: unix:\/\/.*: GET \/info answered HTTP 500/,
    );
    docker.set({ failStatus: 0, delayMs: 5000 });
    const slow = await resolve(kubeletYaml(), { env, limits: FAST });
    expect(slow.hostname).toBe('node-a');
    expect(slow.notes.join('\n')).toMatch(/container\/docker: .*no answer within 300 ms/);
  });

  it('a DOCKER_HOST nothing listens on: refused at once, the chain goes on', async () => {
    const r = await resolve('', {
      env: { DOCKER_DD_AGENT: 'true', DOCKER_HOST: `unix://${join(dir, 'none.sock')}` },
      probes: podProbes({}, { inHostUtsNamespace: async () => true }),
    });
    expect(r.source).toBe('OS hostname');
    expect(r.notes.join('\n')).toMatch(/container\/docker: unix:\/\/.*none\.sock: ENOENT/);
  });
});

describe('EC2: ECS and DMI', () => {
  const INSTANCE = 'i-0123456789abcdef0';
  const hostProbes = (virtual: Record<string, string> = {}) =>
    podProbes(virtual, { osHostname: () => 'web-7', inHostUtsNamespace: async () => true });

  it.each([
    ['AWS_EXECUTION_ENV=AWS_ECS_EC2', { AWS_EXECUTION_ENV: 'AWS_ECS_EC2' }],
    ['ECS_CONTAINER_METADATA_URI_V4', { ECS_CONTAINER_METADATA_URI_V4: 'http://127.0.0.1:1/v4/abc' }],
    ['AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', { AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '/v2/credentials/abc' }],
  ])('on ECS (%s) the instance id replaces even a non-default hostname', async (_, ecsEnv) => {
    cloud.set({ ec2: { instanceId: INSTANCE } });
    expect(await resolve('', { env: ecsEnv, probes: hostProbes() })).toMatchObject({ hostname: INSTANCE, source: 'EC2 instance id (ECS)' });
  });

  it('on ECS /etc/ecs/ecs.config alone is enough', async () => {
    cloud.set({ ec2: { instanceId: INSTANCE } });
    expect((await resolve('', { probes: hostProbes({ '/etc/ecs/ecs.config': 'ECS_CLUSTER=prod\n' }) })).source).toBe(
      'EC2 instance id (ECS)',
    );
  });

  it('not on ECS and not a default name: no EC2 request; ECS excluded by autoconfig_exclude_features: none either', async () => {
    cloud.set({ ec2: { instanceId: INSTANCE } });
    expect((await resolve('', { probes: hostProbes() })).hostname).toBe('web-7');
    expect(
      (await resolve('autoconfig_exclude_features: [ecsec2]', { env: { AWS_EXECUTION_ENV: 'AWS_ECS_EC2' }, probes: hostProbes() }))
        .hostname,
    ).toBe('web-7');
    expect(cloud.requests.filter((q) => q.provider === 'ec2')).toEqual([]);
  });

  it('ECS managed instances: daemon mode uses the instance id, sidecar mode has no hostname', async () => {
    cloud.set({ ec2: { instanceId: INSTANCE } });
    const env = { AWS_EXECUTION_ENV: 'AWS_ECS_MANAGED_INSTANCES' };
    expect(await resolve('', { env, probes: hostProbes() })).toMatchObject({
      hostname: INSTANCE,
      source: 'EC2 instance id (ECS managed instances)',
    });
    expect(await resolve('ecs_deployment_mode: sidecar', { env, probes: hostProbes() })).toMatchObject({
      hostname: '',
      source: 'ECS managed instances sidecar (no hostname)',
    });
  });

  it('ECS Fargate and EKS Fargate (eks_fargate) have no hostname', async () => {
    expect((await resolve('', { env: { AWS_EXECUTION_ENV: 'AWS_ECS_FARGATE' } })).source).toBe('Fargate (no hostname)');
    expect((await resolve('eks_fargate: true\n')).source).toBe('EKS Fargate (no hostname)');
  });

  const NITRO = {
    '/sys/devices/virtual/dmi/id/board_vendor': 'Amazon EC2\n',
    '/sys/devices/virtual/dmi/id/board_asset_tag': `${INSTANCE}\n`,
  };

  it("IMDS unreachable: a Nitro instance's DMI board_asset_tag is the instance id", async () => {
    const r = await resolve('', {
      metadataUrl: await closedLoopbackUrl(),
      env: { AWS_EXECUTION_ENV: 'AWS_ECS_EC2' },
      probes: hostProbes(NITRO),
    });
    expect(r).toMatchObject({ hostname: INSTANCE, source: 'EC2 instance id from DMI (ECS)' });
    expect(r.notes.join('\n')).toMatch(/EC2: ECONNREFUSED/);
  });

  it('DMI even when aws is not in cloud_provider_metadata (IMDS is then "failed"), as upstream', async () => {
    const r = await resolve('cloud_provider_metadata: [gcp]\n', {
      probes: podProbes(NITRO, { osHostname: () => 'ip-10-0-0-1', inHostUtsNamespace: async () => true }),
    });
    expect(r).toMatchObject({ hostname: INSTANCE, source: 'EC2 instance id from DMI' });
    expect(cloud.requests.filter((q) => q.provider === 'ec2')).toEqual([]);
  });

  it.each([
    ['ec2_use_dmi: false', 'ec2_use_dmi: false\n', NITRO, /DMI: ec2_use_dmi is false/],
    ['ec2_imdsv2_transition_payload_enabled: false', 'ec2_imdsv2_transition_payload_enabled: false\n', NITRO, /EC2: ECONNREFUSED/],
    [
      'another board vendor',
      '',
      { ...NITRO, '/sys/devices/virtual/dmi/id/board_vendor': 'Xen\n' },
      /DMI: board vendor is "Xen", not Amazon EC2/,
    ],
    [
      'an asset tag that is no instance id',
      '',
      { ...NITRO, '/sys/devices/virtual/dmi/id/board_asset_tag': 'Not Specified\n' },
      /DMI: board_asset_tag "Not Specified" is not an instance id/,
    ],
  ])('no DMI instance id with %s', async (_, yaml, dmi, note) => {
    const r = await resolve(yaml, {
      metadataUrl: await closedLoopbackUrl(),
      probes: podProbes(dmi, { osHostname: () => 'ip-10-0-0-1', inHostUtsNamespace: async () => true }),
    });
    expect(r.hostname).toBe('ip-10-0-0-1');
    expect(r.notes.join('\n')).toMatch(note);
  });

  it('IMDS answering an invalid id is not a failure of IMDS: no DMI fallback', async () => {
    cloud.set({ ec2: { instanceId: 'not_valid!' } });
    const r = await resolve('', { probes: podProbes(NITRO, { osHostname: () => 'ip-10-0-0-1', inHostUtsNamespace: async () => true }) });
    expect(r.hostname).toBe('ip-10-0-0-1');
    expect(r.notes).toContain('EC2: instance id it is not RFC 1123 compliant');
  });

  it("on EKS the kubelet's node name starts with ip-: the instance id follows it, as for the agent", async () => {
    kubelet.set({ nodeName: 'ip-10-0-0-1.ec2.internal' });
    cloud.set({ ec2: { instanceId: INSTANCE } });
    expect(await resolve(kubeletYaml('cluster_name: prod'), { env: POD_ENV })).toMatchObject({
      hostname: INSTANCE,
      source: 'EC2 instance id',
    });
  });
});
