import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import {
  BINARY_WAIT_MS,
  eventually,
  identityData,
  type KubeFixture,
  kubeFixture,
  NAMESPACE,
  newIdentity,
  type TestIdentity,
  stopProcesses,
} from './watch-fixture.js';
import { type RunningCli, startCli } from './run-cli.js';

// Sized for a loaded 2-core machine: each wait for the binary is generous, the test limit above their sum.
vi.setConfig({ testTimeout: 4 * BINARY_WAIT_MS, hookTimeout: BINARY_WAIT_MS });

// `par-identity watch` as an operator runs it: the BUILT binary, real signals, real exit codes.

interface Running extends RunningCli {
  lines(): Array<Record<string, unknown>>;
}

function startWatch(args: string[]): Running {
  const run = startCli(['watch', ...args], { env: { PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1' } });
  running.push(run.child);
  return {
    ...run,
    lines: () =>
      run
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const running: ChildProcessWithoutNullStreams[] = [];
let kube: KubeFixture;
let dir: string;
let kubeconfig: string;

beforeEach(async () => {
  kube = await kubeFixture();
  dir = await mkdtemp(join(tmpdir(), 'par-watch-cli-'));
  await writeFile(join(dir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
  kubeconfig = join(dir, 'kubeconfig');
  await kube.emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
});
afterEach(async () => {
  await stopProcesses(running);
  await kube.close();
  await rm(dir, { recursive: true, force: true });
});

function expectNoKeyMaterial(run: Running, ids: TestIdentity[]): void {
  for (const id of ids) {
    const d = (JSON.parse(Buffer.from(id.privateKey, 'base64url').toString()) as { d: string }).d;
    for (const text of [run.stdout(), run.stderr()]) {
      expect(text).not.toContain(id.privateKey.slice(0, 40));
      expect(text).not.toContain(d);
    }
  }
}

describe('par-identity watch (built binary)', () => {
  it('writes the file, follows a rotation, and exits 0 on SIGTERM with the result as the last JSON line', async () => {
    const first = newIdentity();
    kube.create(identityData(first));
    const output = join(dir, 'identity.json');
    const run = startWatch(['-c', dir, '--kubeconfig', kubeconfig, '--output', output, '--json']);
    await eventually(() => expect(run.lines().map((l) => l.event)).toContain('written'), BINARY_WAIT_MS);
    expect((await stat(output)).mode & 0o777).toBe(0o600);
    const second = newIdentity();
    kube.update(identityData(second));
    await eventually(() => expect(run.lines().filter((l) => l.event === 'written')).toHaveLength(2), BINARY_WAIT_MS);
    expect(JSON.parse(await readFile(output, 'utf8')).urn).toBe(second.urn);
    run.child.kill('SIGTERM');
    expect(await run.exit).toEqual({ code: 0, signal: null });
    expect(run.lines().at(-1)).toMatchObject({
      schemaVersion: 1,
      status: 'ok',
      command: 'watch',
      stoppedBy: 'SIGTERM',
      reloads: 1,
      fingerprint: second.fingerprint,
    });
    await eventually(() => expect(kube.emu.openWatches).toBe(0));
    expectNoKeyMaterial(run, [first, second]);
  });

  it('exits 0 on SIGINT too, also before any identity exists', async () => {
    const run = startWatch(['-c', dir, '--kubeconfig', kubeconfig]);
    await eventually(() => expect(kube.emu.openWatches).toBe(1), BINARY_WAIT_MS);
    run.child.kill('SIGINT');
    expect(await run.exit).toEqual({ code: 0, signal: null });
    expect(run.stdout()).toContain('watch stopped by SIGINT after 0 reload(s); no identity was loaded');
  });

  it('supervises a command: PAR_IDENTITY_FILE, restart on rotation, SIGTERM forwarded, its exit status is ours', async () => {
    const first = newIdentity();
    kube.create(identityData(first));
    const log = join(dir, 'child.log');
    const script = [
      "const fs = require('node:fs');",
      "const urn = () => JSON.parse(fs.readFileSync(process.env.PAR_IDENTITY_FILE, 'utf8')).urn;",
      // The handler first, then "start": a signal sent after "start" never races it.
      "process.on('SIGTERM', () => { fs.appendFileSync(process.argv[1], 'term\\n'); process.exit(0); });",
      "fs.appendFileSync(process.argv[1], 'start ' + urn() + '\\n');",
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const run = startWatch(['-c', dir, '--kubeconfig', kubeconfig, '--', process.execPath, '-e', script, log]);
    const lines = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    await eventually(async () => expect(await lines()).toEqual([`start ${first.urn}`]), BINARY_WAIT_MS);
    const second = newIdentity();
    kube.update(identityData(second));
    await eventually(async () => expect(await lines()).toEqual([`start ${first.urn}`, 'term', `start ${second.urn}`]), BINARY_WAIT_MS);
    run.child.kill('SIGTERM');
    expect(await run.exit).toEqual({ code: 0, signal: null });
    expect((await lines()).at(-1)).toBe('term');
  });

  it('exits with the status of a supervised command that fails', async () => {
    kube.create(identityData(newIdentity()));
    const run = startWatch(['-c', dir, '--kubeconfig', kubeconfig, '--', process.execPath, '-e', 'process.exit(4)']);
    expect((await run.exit).code).toBe(4);
    expect(run.stderr()).toContain('error[CHILD_EXITED]');
  });

  it('rejects bad flags with exit 2', async () => {
    const run = startWatch(['-c', dir, '--kubeconfig', kubeconfig, '--on-change', 'signal']);
    expect((await run.exit).code).toBe(2);
    expect(run.stderr()).toContain('--on-change signal applies to a supervised command');
  });
});
