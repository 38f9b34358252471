import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AgentIpcEmulator, startAgentIpcEmulator } from '../../emulators/agent-ipc/index.js';
import { generateIpcCertificate } from '../../emulators/agent-ipc/ipc-certificate.js';
import { type CloudMetadataEmulator, closedLoopbackUrl, startCloudMetadataEmulator } from '../../emulators/cloud-metadata/index.js';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { predictReenroll, resolveHost } from '../../src/host/index.js';
import { formatAgentVersion } from '../../src/host/agent-ipc.js';
import type { HostProbes } from '../../src/host/host-probes.js';
import { hostnameProblem } from '../../src/host/hostname-validation.js';
import { apiKeyHash } from '../../src/identity/api-key-hash.js';
import { Deadline } from '../../src/time/index.js';

let dir: string;
let cloud: CloudMetadataEmulator;
let ipc: AgentIpcEmulator;

beforeAll(async () => {
  cloud = await startCloudMetadataEmulator();
  ipc = await startAgentIpcEmulator();
});
afterAll(async () => {
  await cloud.close();
  await ipc.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-host-'));
  cloud.set({});
  cloud.requests.length = 0;
  ipc.set({ hostname: 'agent-host', failStatus: 0 });
  ipc.requests.length = 0;
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function probes(over: Partial<HostProbes> = {}): HostProbes {
  return {
    osHostname: () => 'os-host',
    fqdn: async () => 'os-host.example.com',
    inHostUtsNamespace: async () => true,
    readFile: async () => {
      throw Object.assign(new Error('no'), { code: 'ENOENT' });
    },
    exists: async () => false,
    socketReachable: async () => false,
    ...over,
  };
}

async function resolve(
  yaml: string,
  opts: { env?: NodeJS.ProcessEnv; probes?: Partial<HostProbes>; override?: string; metadataUrl?: string; deadline?: Deadline } = {},
) {
  await writeFile(join(dir, 'datadog.yaml'), yaml);
  const env = { PAR_IDENTITY_CLOUD_METADATA_URL: opts.metadataUrl ?? cloud.url, ...opts.env };
  const config = await loadAgentConfig({ cfgPath: dir, env });
  return resolveHost(config, {
    env,
    probes: probes(opts.probes),
    ipc: { tries: 2, timeoutMs: 1000, pauseMs: 1 },
    ...(opts.override === undefined ? {} : { override: opts.override }),
    ...(opts.deadline ? { deadline: opts.deadline } : {}),
  });
}

describe('the agent chain: stop providers', () => {
  it('config hostname stops the chain: no metadata request is made', async () => {
    const r = await resolve('hostname: web-1.example.com\n', { probes: { osHostname: () => 'ip-10-0-0-1' } });
    expect(r).toMatchObject({ hostname: 'web-1.example.com', source: `config hostname (${join(dir, 'datadog.yaml')})` });
    expect(cloud.requests).toEqual([]);
  });

  it('DD_HOSTNAME overrides the file; an empty DD_HOSTNAME does not', async () => {
    expect((await resolve('hostname: web-1\n', { env: { DD_HOSTNAME: 'web-2' } })).source).toBe('config hostname (env DD_HOSTNAME)');
    expect((await resolve('hostname: web-1\n', { env: { DD_HOSTNAME: '' } })).hostname).toBe('web-1');
  });

  it('an invalid config hostname is skipped (the agent validates it) and the chain goes on', async () => {
    const r = await resolve('hostname: localhost\n');
    expect(r).toMatchObject({ hostname: 'os-host', source: 'OS hostname' });
    expect(r.notes).toContain('config hostname: localhost is a local hostname');
  });

  it('hostname_file is trimmed and validated, and stops', async () => {
    const r = await resolve(`hostname_file: ${join(dir, 'name')}\n`, { probes: { readFile: async () => '  file-host \n' } });
    expect(r).toMatchObject({ hostname: 'file-host', source: `hostname_file ${join(dir, 'name')}` });
  });

  it('Fargate has no hostname at all', async () => {
    expect(await resolve('', { env: { ECS_FARGATE: 'true' } })).toMatchObject({ hostname: '', source: 'Fargate (no hostname)' });
  });

  it('GCE stops the chain, even on an ip- OS hostname (no EC2 request)', async () => {
    cloud.set({ gce: { hostname: 'vm1.c.proj.internal' }, ec2: { instanceId: 'i-0abc' } });
    const r = await resolve('', { probes: { osHostname: () => 'ip-10-0-0-1' } });
    expect(r).toMatchObject({ hostname: 'vm1.c.proj.internal', source: 'GCE metadata' });
    expect(cloud.requests.map((q) => q.provider)).toEqual(['gce']);
    expect(cloud.requests[0]!.headers['metadata-flavor']).toBe('Google');
  });

  it('Azure is off by default (azure_hostname_style: os); each style names the host as upstream', async () => {
    const azure = { vmId: '1c2d-vm', name: 'vm1', resourceGroupName: 'rg1', subscriptionId: 'sub1' };
    cloud.set({ azure });
    expect((await resolve('')).source).toBe('OS hostname');
    expect(cloud.requests.filter((q) => q.provider === 'azure')).toEqual([]);
    expect((await resolve('azure_hostname_style: vmid\n')).hostname).toBe('1c2d-vm');
    expect((await resolve('azure_hostname_style: name\n')).hostname).toBe('vm1');
    expect((await resolve('azure_hostname_style: name_and_resource_group\n')).hostname).toBe('vm1.rg1');
    expect(await resolve('azure_hostname_style: full\n')).toMatchObject({ hostname: 'vm1.rg1.sub1', source: 'Azure metadata (full)' });
    expect(cloud.requests.at(-1)!.headers.metadata).toBe('true');
  });

  it('cloud_provider_metadata gates every provider: an empty list makes no cloud request', async () => {
    cloud.set({ gce: { hostname: 'vm1' }, ec2: { instanceId: 'i-0abc' } });
    const r = await resolve('cloud_provider_metadata: []\nazure_hostname_style: vmid\n', { probes: { osHostname: () => 'ip-10-0-0-1' } });
    expect(r).toMatchObject({ hostname: 'ip-10-0-0-1', source: 'OS hostname' });
    expect(cloud.requests).toEqual([]);
    const env = await resolve('', { env: { DD_CLOUD_PROVIDER_METADATA: 'aws' }, probes: { osHostname: () => 'ip-10-0-0-1' } });
    expect(env.source).toBe('EC2 instance id');
    expect(cloud.requests.map((q) => q.provider)).not.toContain('gce');
  });

  it('a slow GCE is abandoned after gce_metadata_timeout and the chain goes on', async () => {
    cloud.set({ gce: { hostname: 'late' }, delayMs: { gce: 10_000 } });
    const r = await resolve('gce_metadata_timeout: 50\n');
    expect(r.source).toBe('OS hostname');
    expect(r.notes.join('\n')).toMatch(/GCE: no answer within 50 ms/);
  });

  it("--timeout cuts a provider's own longer cap, and a lookup cut short gives no hostname (the next provider's could be another than the agent's)", async () => {
    cloud.set({ gce: { hostname: 'late' }, delayMs: { gce: 60_000 } });
    const err = await resolve('gce_metadata_timeout: 60000\n', { deadline: Deadline.after(300) }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'HOSTNAME_UNRESOLVED' });
    expect((err as Error).message).toMatch(/^the hostname lookup did not finish before --timeout \(300 ms\)/);
    expect(JSON.stringify((err as { details?: unknown }).details)).toMatch(/GCE: no answer within \d+ ms \(command deadline\)/);
  });

  it('a lookup that ends within --timeout is the same as without one', async () => {
    cloud.set({ gce: { hostname: 'gce-host.c.project.internal' } });
    const r = await resolve('', { deadline: Deadline.after(60_000) });
    expect(r).toMatchObject({ source: 'GCE metadata' });
  });

  it('outside any cloud (connection refused) the chain ends on the OS hostname', async () => {
    const r = await resolve('', { metadataUrl: await closedLoopbackUrl(), probes: { osHostname: () => 'ip-10-1-2-3' } });
    expect(r).toMatchObject({ hostname: 'ip-10-1-2-3', source: 'OS hostname' });
    expect(r.notes.join('\n')).toMatch(/GCE: ECONNREFUSED[\s\S]*EC2: ECONNREFUSED/);
  });
});

describe('the agent chain: continue providers', () => {
  it('FQDN (hostname_fqdn) replaces the OS hostname', async () => {
    expect(await resolve('hostname_fqdn: true\n')).toMatchObject({ hostname: 'os-host.example.com', source: 'FQDN (hostname_fqdn)' });
  });

  it('the OS hostname is used only in the host UTS namespace, or with hostname_trust_uts_namespace', async () => {
    const inContainer = { inHostUtsNamespace: async () => false };
    await expect(resolve('', { probes: inContainer })).rejects.toMatchObject({ code: 'HOSTNAME_UNRESOLVED' });
    expect((await resolve('hostname_trust_uts_namespace: true\n', { probes: inContainer })).source).toBe('OS hostname');
    expect((await resolve('', { probes: { inHostUtsNamespace: async () => undefined } })).source).toBe('OS hostname');
  });

  it('EC2: an ip- hostname becomes the instance id, over IMDSv2 (token first)', async () => {
    cloud.set({ ec2: { instanceId: 'i-0abc123def4567890', imdsv2: 'required' } });
    const r = await resolve('', { probes: { osHostname: () => 'ip-10-0-0-1' } });
    expect(r).toMatchObject({ hostname: 'i-0abc123def4567890', source: 'EC2 instance id' });
    expect(cloud.requests.filter((q) => q.provider === 'ec2').map((q) => `${q.method} ${q.path}`)).toEqual([
      'PUT /latest/api/token',
      'GET /latest/meta-data/instance-id',
    ]);
    expect(cloud.requests.at(-1)!.headers['x-aws-ec2-metadata-token']).toBeTruthy();
    expect(cloud.requests[cloud.requests.length - 2]!.headers['x-aws-ec2-metadata-token-ttl-seconds']).toBe('21600');
  });

  it('EC2: without a token endpoint it falls back to IMDSv1', async () => {
    cloud.set({ ec2: { instanceId: 'i-0v1only', imdsv2: 'v1-only' } });
    expect((await resolve('', { probes: { osHostname: () => 'domU-12-31' } })).hostname).toBe('i-0v1only');
  });

  it('EC2 prefixes: ip- and domu always, ec2amaz- only with ec2_use_windows_prefix_detection; others never unless prioritized', async () => {
    cloud.set({ ec2: { instanceId: 'i-0abc' } });
    expect((await resolve('', { probes: { osHostname: () => 'EC2AMAZ-ABC' } })).hostname).toBe('EC2AMAZ-ABC');
    expect((await resolve('ec2_use_windows_prefix_detection: true\n', { probes: { osHostname: () => 'EC2AMAZ-ABC' } })).hostname).toBe(
      'i-0abc',
    );
    cloud.requests.length = 0;
    expect((await resolve('', { probes: { osHostname: () => 'web-7' } })).hostname).toBe('web-7');
    expect(cloud.requests.filter((q) => q.provider === 'ec2')).toEqual([]);
    expect((await resolve('ec2_prioritize_instance_id_as_hostname: true\n', { probes: { osHostname: () => 'web-7' } })).hostname).toBe(
      'i-0abc',
    );
  });

  it('EC2 absent or an invalid instance id: the OS hostname stays', async () => {
    expect((await resolve('', { probes: { osHostname: () => 'ip-10-0-0-1' } })).hostname).toBe('ip-10-0-0-1');
    cloud.set({ ec2: { instanceId: 'not_valid!' } });
    const r = await resolve('', { probes: { osHostname: () => 'ip-10-0-0-1' } });
    expect(r.hostname).toBe('ip-10-0-0-1');
    expect(r.notes).toContain('EC2: instance id it is not RFC 1123 compliant');
  });
});

describe('the running agent first (IPC)', () => {
  async function withAgentFiles(yamlExtra = '') {
    await ipc.writeFiles(dir);
    return `cmd_host: 127.0.0.1\ncmd_port: ${ipc.port}\n${yamlExtra}`;
  }

  it('asks the agent first, with its token and certificate; the chain is not run', async () => {
    ipc.set({ hostname: 'i-from-agent' });
    cloud.set({ gce: { hostname: 'vm1' } });
    const r = await resolve(await withAgentFiles('hostname: from-config\n'));
    expect(r).toMatchObject({ hostname: 'i-from-agent', source: 'agent IPC' });
    expect(ipc.requests).toEqual([
      { method: 'GET', path: '/agent/hostname', authorization: `Bearer ${ipc.token}`, clientCert: true, status: 200 },
    ]);
    expect(cloud.requests).toEqual([]);
  });

  it('an agent answering "" is a failure: the chain decides', async () => {
    ipc.set({ hostname: '' });
    const r = await resolve(await withAgentFiles('hostname: from-config\n'));
    expect(r).toMatchObject({ hostname: 'from-config' });
    expect(r.notes[0]).toMatch(/agent answered ""/);
  });

  it('an agent answering a hostname it would refuse itself (escape sequences, a local name) is a failure: the chain decides, nothing of it shown', async () => {
    for (const [hostname, why] of [
      ['\u001b]52;c;b3duZWQ=\u0007evil\u001b[2J', 'it is not RFC 1123 compliant'],
      ['localhost', 'localhost is a local hostname'],
    ] as const) {
      ipc.set({ hostname });
      const r = await resolve(await withAgentFiles('hostname: from-config\n'));
      expect(r).toMatchObject({ hostname: 'from-config' });
      expect(r.notes[0]).toContain(`the agent answered a hostname it would refuse itself (${why})`);
      expect(r.notes.join('\n')).not.toContain('evil');
    }
  });

  it('a refused token (403) is not retried and the chain decides', async () => {
    const yaml = await withAgentFiles('hostname: from-config\n');
    await writeFile(join(dir, 'auth_token'), 'f'.repeat(64));
    const r = await resolve(yaml);
    expect(r.hostname).toBe('from-config');
    expect(r.notes[0]).toMatch(/HTTP 403 \(the auth token was refused\)/);
    expect(ipc.requests).toHaveLength(1);
  });

  it('auth_token_file_path and ipc_cert_file_path are honoured', async () => {
    const sub = join(dir, 'secure');
    await (await import('node:fs/promises')).mkdir(sub);
    await ipc.writeFiles(sub);
    const r = await resolve(
      `cmd_host: localhost\ncmd_port: ${ipc.port}\nauth_token_file_path: ${join(sub, 'auth_token')}\nipc_cert_file_path: ${join(sub, 'ipc_cert.pem')}\n`,
    );
    expect(r.source).toBe('agent IPC');
  });

  it('cmd_port ≤ 0 disables IPC; a non-loopback cmd_host is refused; a missing token skips it', async () => {
    await ipc.writeFiles(dir);
    expect((await resolve('cmd_port: 0\nhostname: h\n')).notes[0]).toBe('agent IPC not asked: cmd_port is 0 (IPC disabled)');
    expect((await resolve('cmd_host: 10.1.2.3\nhostname: h\n')).notes[0]).toMatch(/not a loopback address/);
    await rm(join(dir, 'auth_token'));
    expect((await resolve('hostname: h\n')).notes[0]).toMatch(/^agent IPC not asked: no auth token readable at/);
    expect(ipc.requests).toEqual([]);
  });

  it("a certificate that is not the agent's fails TLS verification: the token is never sent", async () => {
    const yaml = await withAgentFiles('hostname: from-config\n');
    await writeFile(join(dir, 'ipc_cert.pem'), (await generateIpcCertificate()).pem);
    const r = await resolve(yaml);
    expect(r.hostname).toBe('from-config');
    expect(r.notes[0]).toMatch(
      /agent IPC on 127\.0\.0\.1:\d+: (SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|ERR_TLS_CERT_ALTNAME_INVALID|CERT_SIGNATURE_FAILURE)/,
    );
    expect(ipc.requests).toEqual([]);
  });

  it('a PEM without the key is refused before connecting', async () => {
    const yaml = await withAgentFiles('hostname: from-config\n');
    await writeFile(join(dir, 'ipc_cert.pem'), ipc.certPem.replace(/-----BEGIN PRIVATE KEY-----[\s\S]*$/, ''));
    expect((await resolve(yaml)).notes[0]).toMatch(/does not hold both a certificate and a key/);
  });
});

describe('--hostname, validation, re-enroll prediction, agent version format', () => {
  it('--hostname overrides everything and is validated', async () => {
    await ipc.writeFiles(dir);
    expect(await resolve(`cmd_port: ${ipc.port}\n`, { override: 'forced-1' })).toEqual({
      hostname: 'forced-1',
      source: '--hostname',
      notes: [],
    });
    expect(ipc.requests).toEqual([]);
    await expect(resolve('', { override: 'LOCALHOST' })).rejects.toMatchObject({ code: 'HOSTNAME_INVALID', exitCode: 3 });
  });

  it.each([
    ['', 'it is empty'],
    ['localhost', 'localhost is a local hostname'],
    ['Localhost.LocalDomain', 'Localhost.LocalDomain is a local hostname'],
    ['ip6-localhost', 'ip6-localhost is a local hostname'],
    ['a'.repeat(256), 'it is longer than 255 characters'],
    ['-lead', 'it is not RFC 1123 compliant'],
    ['under_score', 'it is not RFC 1123 compliant'],
    ['web-1.example.com', undefined],
    ['i-0abc123', undefined],
  ])('hostnameProblem(%j) = %j', (name, problem) => {
    expect(hostnameProblem(name)).toBe(problem);
  });

  it('predictReenroll: hostname or api_key_hash differing, each named; empty stored values never trigger', () => {
    const hash = apiKeyHash('key-1');
    expect(predictReenroll({ hostname: 'ip-10-0-0-1', apiKeyHash: hash }, 'i-0abc', 'key-1')).toEqual([
      'stored hostname ip-10-0-0-1 differs from the hostname the agent resolves (i-0abc)',
    ]);
    expect(predictReenroll({ hostname: 'h', apiKeyHash: hash }, 'h', 'key-2')).toEqual([
      'stored api_key_hash differs from the hash of the API key the agent reads',
    ]);
    expect(predictReenroll({ hostname: 'h', apiKeyHash: hash }, 'h', '  key-1\n')).toEqual([]);
    expect(predictReenroll({}, 'other', 'other-key')).toEqual([]);
  });

  it('formatAgentVersion follows pkg/version Version.String()', () => {
    const v = { Major: 7, Minor: 66, Patch: 0, Pre: '', Meta: '', Commit: 'abc1234' };
    expect(formatAgentVersion(v)).toBe('7.66.0+commit.abc1234');
    expect(formatAgentVersion({ ...v, Pre: 'rc.1', Meta: 'git.12', Commit: 'def' })).toBe('7.66.0-rc.1+git.12.commit.def');
    expect(formatAgentVersion({ ...v, Commit: '' })).toBe('7.66.0');
    expect(formatAgentVersion({ ...v, Major: '7' })).toBeUndefined();
    expect(formatAgentVersion({ ...v, Commit: 'a\nb' })).toBeUndefined();
  });
});
