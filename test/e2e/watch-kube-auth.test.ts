import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runCli, startCli } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import {
  BINARY_WAIT_MS,
  eventually,
  identityData,
  type KubeFixture,
  kubeFixture,
  NAMESPACE,
  newIdentity,
  SECRET,
  stopProcesses,
} from './watch-fixture.js';

// Sized for a loaded 2-core machine: each wait for the binary is generous, the test limit above their sum.
vi.setConfig({ testTimeout: 4 * BINARY_WAIT_MS, hookTimeout: BINARY_WAIT_MS });

// `par-identity watch` (the BUILT binary) authenticates as kubectl does, through the one transport of
// every command (src/kube/kube-transport.ts): the kubeconfig's token file and exec credential plugin,
// and the limits our exec plugin runs have (kubectl has none). Every other kubeconfig form:
// test/e2e/kubeconfig-conformance.test.ts.

const running: ChildProcessWithoutNullStreams[] = [];
let kube: KubeFixture;
let dir: string;

beforeEach(async () => {
  kube = await kubeFixture();
  dir = await mkdtemp(join(tmpdir(), 'par-watch-auth-'));
  await writeFile(join(dir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
});
afterEach(async () => {
  await stopProcesses(running);
  await kube.close();
  await rm(dir, { recursive: true, force: true });
});

/** The emulator's kubeconfig with its user replaced by `user`. */
async function kubeconfigWithUser(user: Record<string, unknown>): Promise<string> {
  const doc = parse(kube.emu.kubeconfig({ namespace: NAMESPACE })) as { users: Array<{ name: string; user: unknown }> };
  doc.users[0]!.user = user;
  const path = join(dir, 'kubeconfig');
  await writeFile(path, stringify(doc), { mode: 0o600 });
  return path;
}

async function watchLoads(kubeconfig: string): Promise<void> {
  const id = newIdentity();
  kube.create(identityData(id));
  const run = startCli(['watch', '-c', dir, '--kubeconfig', kubeconfig, '--json'], { env: { NO_COLOR: '1' } });
  running.push(run.child);
  const loaded = await eventually(() => {
    const line = run
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.event === 'loaded');
    expect(line, run.stderr()).toBeDefined();
    return line!;
  }, BINARY_WAIT_MS);
  expect(loaded.fingerprint).toBe(id.fingerprint);
  await eventually(() => expect(kube.emu.openWatches).toBe(1), BINARY_WAIT_MS);
  run.child.kill('SIGTERM');
  expect((await run.exit).code, run.stderr()).toBe(0);
}

describe('watch authenticates as the kubeconfig says', () => {
  it("tokenFile, relative to the kubeconfig's folder (not the working directory): the token read from it, a trailing newline not part of it", async () => {
    kube.emu.addToken('token-from-file', {
      user: 'file-user',
      namespace: NAMESPACE,
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
    });
    await writeFile(join(dir, 'token'), 'token-from-file\n');
    await watchLoads(await kubeconfigWithUser({ tokenFile: 'token' }));
    expect(new Set(kube.emu.requests.filter((r) => r.resource === 'secrets').map((r) => r.user))).toEqual(new Set(['file-user']));
  });

  it('exec plugin: its token, the plugin run once for the list and the watch', async () => {
    kube.emu.addToken('token-from-exec', {
      user: 'exec-user',
      namespace: NAMESPACE,
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
    });
    const calls = join(dir, 'calls');
    const plugin = join(dir, 'credential-plugin.js');
    await writeFile(
      plugin,
      `require('node:fs').appendFileSync(${JSON.stringify(calls)}, 'x');
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: process.env.PLUGIN_TOKEN } }));`,
    );
    await chmod(plugin, 0o755);
    await watchLoads(
      await kubeconfigWithUser({
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: [plugin],
          env: [{ name: 'PLUGIN_TOKEN', value: 'token-from-exec' }],
          interactiveMode: 'Never',
        },
      }),
    );
    expect(new Set(kube.emu.requests.filter((r) => r.resource === 'secrets').map((r) => r.user))).toEqual(new Set(['exec-user']));
    expect(await readFile(calls, 'utf8')).toBe('x');
  });
});

/** Pids of live processes whose command line names `script`. */
function processesRunning(script: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(script);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('the exec plugin has limits kubectl does not have', () => {
  /** A plugin that fails (exit 3) while `gate` does not exist, then gives a token. */
  async function gatedPlugin(gate: string): Promise<Record<string, unknown>> {
    const plugin = join(dir, 'gated-plugin.js');
    await writeFile(
      plugin,
      `if (!require('node:fs').existsSync(${JSON.stringify(gate)})) { process.stderr.write('not logged in yet'); process.exit(3); }
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'token-from-exec' } }));`,
    );
    return { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' };
  }

  it('status --timeout 1: a plugin that never answers is stopped at the command deadline, exit 9 KUBE_CREDENTIALS', async () => {
    const pidFile = join(dir, 'plugin.pid');
    const plugin = join(dir, 'hanging-plugin.js');
    await writeFile(
      plugin,
      `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`,
    );
    const kubeconfig = await kubeconfigWithUser({
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' },
    });
    const run = await runCli(['status', '--secret', '-c', dir, '--kubeconfig', kubeconfig, '--timeout', '1s'], {
      env: { NO_COLOR: '1', HOME: dir },
    });
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[KUBE_CREDENTIALS]');
    expect(run.stderr).toMatch(/no credential within [\d.]+ s \(the command deadline\); the plugin was stopped/);
    // On a loaded machine the plugin may be stopped before it even wrote its pid: then look for it by
    // its command line. Either way no process of it is left.
    const pid = Number(await readFile(pidFile, 'utf8').catch(() => '0'));
    if (pid > 0) await eventually(() => expect(() => process.kill(pid, 0)).toThrow(), BINARY_WAIT_MS);
    await eventually(() => expect(processesRunning(plugin)).toEqual([]), BINARY_WAIT_MS);
    expect(kube.emu.requests.filter((r) => r.resource === 'secrets')).toEqual([]);
  });

  it('watch: a failing plugin is a watch-error retried with backoff, its words in the message; once it works the identity loads', async () => {
    kube.emu.addToken('token-from-exec', {
      user: 'exec-user',
      namespace: NAMESPACE,
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
    });
    const id = newIdentity();
    kube.create(identityData(id));
    const gate = join(dir, 'logged-in');
    // The sidecar's form: --secret-name and -n look nothing up, so the first request is the watch's own.
    const run = startCli(
      [
        'watch',
        '-c',
        dir,
        '-n',
        NAMESPACE,
        '--secret-name',
        SECRET,
        '--kubeconfig',
        await kubeconfigWithUser({ exec: await gatedPlugin(gate) }),
        '--json',
      ],
      { env: { NO_COLOR: '1', PAR_IDENTITY_RETRY_INITIAL_MS: '20' } },
    );
    running.push(run.child);
    const events = () =>
      run
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; error?: { code: string; message: string; hint: string }; fingerprint?: string });
    const failed = await eventually(() => {
      const e = events().find((l) => l.event === 'watch-error');
      expect(e, run.stderr()).toBeDefined();
      return e!;
    }, BINARY_WAIT_MS);
    expect(failed.error).toMatchObject({
      code: 'KUBE_CREDENTIALS',
      message: expect.stringContaining('failed with exit code 3: not logged in yet'),
    });
    expect(failed.error!.hint).toContain('retrying in');
    await writeFile(gate, '');
    const loaded = await eventually(() => {
      const e = events().find((l) => l.event === 'loaded');
      expect(e, run.stderr()).toBeDefined();
      return e!;
    }, BINARY_WAIT_MS);
    expect(loaded.fingerprint).toBe(id.fingerprint);
    run.child.kill('SIGTERM');
    expect((await run.exit).code).toBe(0);
  });
});
