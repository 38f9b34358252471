import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AgentIpcEmulator, startAgentIpcEmulator } from '../../emulators/agent-ipc/index.js';
import { type LocalFixture, localFixture } from './local-fixture.js';

// The built binary: connections after enrollment, and the X-Datadog-OnPrem-Version it sends.

let fx: LocalFixture;
let ipc: AgentIpcEmulator;
beforeAll(async () => {
  ipc = await startAgentIpcEmulator();
});
afterAll(() => ipc.close());
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(() => fx.close());

// Appended under the fixture's `private_action_runner:` block.
const ALLOW = '  actions_allowlist:\n    - com.datadoghq.kubernetes.core.listPod\n    - com.datadoghq.script.runPredefinedScript';

describe('connections after enrollment', () => {
  it('creates the Kubernetes and Script connections for the new runner, named after it', async () => {
    await fx.writeConfig(ALLOW);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const runner = fx.emulator.runners.at(-1)!;
    expect(fx.emulator.connections.map((c) => [c.integrationType, c.name, c.runnerId])).toEqual([
      ['Kubernetes', `Kubernetes (${runner.name})`, runner.runnerId],
      ['Script', `Script (${runner.name})`, runner.runnerId],
    ]);
    expect(fx.emulator.connections[1]!.credentials).toEqual({
      configFileLocation: `${fx.dir}/private-action-runner/script-config.yaml`,
      type: 'Script',
    });
    expect(fx.emulator.connections[0]!.tags).toEqual([`runner-id:${runner.runnerId}`, 'hostname:e2e-host']);
    expect(JSON.parse(run.stdout).connections).toEqual({ created: ['Kubernetes', 'Script'], failed: [] });
  });

  it('skip_connection_creation and API-key-only enrollment create none', async () => {
    await fx.writeConfig(`${ALLOW}\n  skip_connection_creation: true`);
    expect((await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'])).code).toBe(0);
    await fx.writeConfig(`${ALLOW}\n  api_key_only_enrollment: true`);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    expect(fx.emulator.connections).toEqual([]);
    expect(run.stdout + run.stderr).toContain('connections: not created (API-key-only enrollment)');
  });

  it('a failing connections call is a warning; the rotation still succeeds (exit 0)', async () => {
    await fx.writeConfig(ALLOW);
    fx.emulator.script('connections', { status: 500 }, { status: 500 });
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('connections: Kubernetes not created (HTTP 500)');
  });
});

describe('X-Datadog-OnPrem-Version', () => {
  it('is the running agent version when it answers on IPC, and says so', async () => {
    await ipc.writeFiles(fx.dir);
    await fx.writeConfig(`cmd_host: 127.0.0.1\ncmd_port: ${ipc.port}`);
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toContain('X-Datadog-OnPrem-Version: 7.66.0+commit.abc1234 (agent IPC)');
    const sent = fx.emulator.requests.map((r) => r.headers['x-datadog-onprem-version']);
    expect(sent).toEqual(['7.66.0+commit.abc1234', '7.66.0+commit.abc1234']);
  });

  it('is this tool version otherwise, and the emulator accepts its format', async () => {
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toMatch(/X-Datadog-OnPrem-Version: \d+\.\d+\.\d+\S* \(par-identity version\)/);
  });
});
