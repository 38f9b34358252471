import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { type AgentIpcEmulator, startAgentIpcEmulator } from '../../emulators/agent-ipc/index.js';
import { connectionBody, connectionsToCreate, createConnections, effectiveAllowlist } from '../../src/enrollment/connections.js';
import { resolveAgentVersion } from '../../src/host/index.js';

describe('connections as the agent creates them', () => {
  it('the body is the agent marshalling: client mode, attribute order, sorted credential keys', () => {
    const [k8s, script] = connectionsToCreate(
      ['com.datadoghq.kubernetes.core.listPod', 'com.datadoghq.script.runPredefinedScript'],
      '/etc/datadog-agent/',
    );
    expect(connectionBody(k8s!, 'r-1', 'host-20260101000000', ['runner-id:r-1', 'hostname:host'])).toBe(
      '{"data":{"type":"action_connection","attributes":{"name":"Kubernetes (host-20260101000000)","runner_id":"r-1","tags":["runner-id:r-1","hostname:host"],"integration":{"type":"Kubernetes","credentials":{"type":"KubernetesServiceAccount"}}}}}',
    );
    expect(connectionBody(script!, 'r-1', 'n', [])).toContain(
      '"integration":{"type":"Script","credentials":{"configFileLocation":"/etc/datadog-agent/private-action-runner/script-config.yaml","type":"Script"}}',
    );
  });

  it('only the Kubernetes and Script bundles lead to a connection; default actions as upstream', () => {
    expect(connectionsToCreate(['com.datadoghq.http.request', 'com.datadoghq.remoteaction.rshell.runCommand'], '/c')).toEqual([]);
    expect(effectiveAllowlist([], false, 'cluster_agent')).toEqual([]);
    expect(connectionsToCreate(effectiveAllowlist([], true, 'cluster_agent'), '/c').map((d) => d.integrationType)).toEqual(['Kubernetes']);
    expect(connectionsToCreate(effectiveAllowlist([], true, 'private_action_runner'), '/c')).toEqual([]);
  });

  it.each<[string, Partial<Parameters<typeof createConnections>[0]>, string]>([
    ['API-key-only enrollment', { apiKeyOnly: true }, 'API-key-only enrollment'],
    ['skip_connection_creation', { skip: true }, 'private_action_runner.skip_connection_creation is true'],
    ['an empty allowlist', { allowlist: [] }, 'private_action_runner.actions_allowlist is empty'],
    ['no matching bundle', { allowlist: ['com.datadoghq.http.request'] }, 'no Kubernetes or Script action in the allowlist'],
  ])('skipped for %s, without a request', async (_name, over, skipped) => {
    const outcome = await createConnections({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'k',
      appKey: 'a',
      apiKeyOnly: false,
      skip: false,
      allowlist: ['com.datadoghq.kubernetes.core.listPod'],
      runnerId: 'r',
      runnerName: 'n',
      hostname: 'h',
      configDir: '/etc/datadog-agent',
      version: '7.66.0',
      timeoutMs: 1000,
      ...over,
    });
    expect(outcome).toEqual({ skipped, created: [], failed: [] });
  });

  it('a failure is reported per connection, never thrown', async () => {
    const outcome = await createConnections({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'k',
      appKey: 'a',
      apiKeyOnly: false,
      skip: false,
      allowlist: ['com.datadoghq.kubernetes.core.listPod', 'com.datadoghq.script.x'],
      runnerId: 'r',
      runnerName: 'n',
      hostname: 'h',
      configDir: '/etc/datadog-agent',
      version: '7.66.0',
      timeoutMs: 1000,
    });
    expect(outcome.created).toEqual([]);
    expect(outcome.failed.map((f) => [f.integrationType, f.reason])).toEqual([
      ['Kubernetes', expect.stringContaining('ECONNREFUSED')],
      ['Script', expect.stringContaining('ECONNREFUSED')],
    ]);
  });
});

describe('X-Datadog-OnPrem-Version: the running agent, else --agent-version, else this tool', () => {
  let ipc: AgentIpcEmulator;
  let dir: string;
  beforeAll(async () => {
    ipc = await startAgentIpcEmulator();
    dir = await mkdtemp(join(tmpdir(), 'par-ver-'));
  });
  afterAll(async () => {
    await ipc.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function config(yaml: string) {
    await writeFile(join(dir, 'datadog.yaml'), yaml);
    return loadAgentConfig({ cfgPath: dir, env: {} });
  }

  it('asks the agent on IPC and formats its version object', async () => {
    await ipc.writeFiles(dir);
    const cfg = await config(`cmd_host: 127.0.0.1\ncmd_port: ${ipc.port}\n`);
    expect(await resolveAgentVersion(cfg, { flag: '7.1.0', toolVersion: '0.1.0' })).toEqual({
      version: '7.66.0+commit.abc1234',
      source: 'agent IPC',
    });
  });

  it('falls back to --agent-version, then to the tool version, saying why', async () => {
    const cfg = await config('cmd_port: 0\n');
    expect(await resolveAgentVersion(cfg, { flag: '7.64.2', toolVersion: '0.1.0' })).toEqual({
      version: '7.64.2',
      source: '--agent-version',
      note: 'agent IPC not asked: cmd_port is 0 (IPC disabled)',
    });
    expect((await resolveAgentVersion(cfg, { toolVersion: '0.1.0' })).source).toBe('par-identity version');
    ipc.set({ version: null });
    await ipc.writeFiles(dir);
    const noEndpoint = await config(`cmd_host: 127.0.0.1\ncmd_port: ${ipc.port}\n`);
    expect(await resolveAgentVersion(noEndpoint, { toolVersion: '0.1.0', ipc: { tries: 1 } })).toEqual({
      version: '0.1.0',
      source: 'par-identity version',
      note: 'agent IPC: HTTP 404',
    });
  });

  it('refuses an --agent-version that is not an agent version', async () => {
    await expect(resolveAgentVersion(await config(''), { flag: 'latest', toolVersion: '0.1.0' })).rejects.toMatchObject({
      code: 'AGENT_VERSION_INVALID',
      exitCode: 3,
    });
  });
});
