import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runWatch } from '../../src/watch/run-watch.js';
import type { WatchOptions } from '../../src/watch/watch-options.js';
import { type CommandFixture, commandFixture } from './watch-command-fixture.js';
import { eventually, identityData, newIdentity, secretData, type TestIdentity } from './watch-fixture.js';

// `par-identity watch` run in-process (`runWatch` with a fake signal source) against the Kubernetes
// API emulator: output file, signal, supervised command, health endpoints, stop, usage errors.

let fx: CommandFixture;
beforeEach(async () => {
  fx = await commandFixture();
});
afterEach(async () => {
  await fx.close();
});

function start(extra: Partial<WatchOptions> = {}) {
  const running = runWatch(fx.options(extra), fx.io, fx.signals);
  running.catch(() => undefined);
  return running;
}

const fileHolds = async (path: string, id: TestIdentity) => {
  const record = JSON.parse(await readFile(path, 'utf8')) as { urn: string };
  expect(record.urn).toBe(id.urn);
};

function expectNoKeyMaterial(...ids: TestIdentity[]): void {
  const all = fx.io.out.join('') + fx.io.err.join('');
  for (const id of ids) {
    expect(all).not.toContain(id.privateKey);
    expect(all).not.toContain(id.privateKey.slice(0, 40));
    const d = (JSON.parse(Buffer.from(id.privateKey, 'base64url').toString()) as { d: string }).d;
    expect(all).not.toContain(d);
  }
}

/** Appends what a supervised command sees to a log: start <fingerprint from env> <urn from file>; hup <urn from file>; term. */
const CHILD = `
const fs = require('node:fs');
const log = (line) => fs.appendFileSync(process.argv[1], line + '\\n');
const urn = () => JSON.parse(fs.readFileSync(process.env.PAR_IDENTITY_FILE, 'utf8')).urn;
process.on('SIGHUP', () => log('hup ' + urn()));
process.on('SIGUSR1', () => log('usr1'));
process.on('SIGTERM', () => { log('term'); process.exit(Number(process.env.EXIT_ON_TERM ?? 0)); });
// Logged only once the handlers are in place: a test that signals after "start" never races them.
log('start ' + process.env.PAR_IDENTITY_FINGERPRINT + ' ' + urn());
setInterval(() => {}, 1000);
`;

async function childLog(path: string): Promise<string[]> {
  return (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

describe('watch --output', () => {
  it('keeps the file up to date (0600, protocol bytes, previous as .bak), JSON lines without key material, SIGTERM → clean stop', async () => {
    const first = newIdentity();
    fx.kube.create(identityData(first, { api_key_hash: 'a'.repeat(64), orch_cluster_id: 'c1' }));
    const output = join(fx.dir, 'out', 'identity.json');
    await import('node:fs/promises').then((fs) => fs.mkdir(join(fx.dir, 'out')));
    const running = start({ output, json: true });
    await eventually(() => expect(fx.jsonLines().map((l) => l.event)).toContain('written'));
    expect(await readFile(output, 'utf8')).toBe(
      JSON.stringify({ private_key: first.privateKey, urn: first.urn, api_key_hash: 'a'.repeat(64) }),
    );
    expect((await stat(output)).mode & 0o777).toBe(0o600);

    const second = newIdentity();
    fx.kube.update(identityData(second));
    await eventually(() => expect(fx.jsonLines().filter((l) => l.event === 'written')).toHaveLength(2));
    await fileHolds(output, second);
    await fileHolds(`${output}.bak`, first);

    fx.signals.emit('SIGTERM');
    const result = await running;
    expect(result).toMatchObject({
      json: { command: 'watch', stoppedBy: 'SIGTERM', urn: second.urn, fingerprint: second.fingerprint, reloads: 1, reloadErrors: 0 },
    });
    await eventually(() => expect(fx.kube.emu.openWatches).toBe(0));
    const lines = fx.jsonLines();
    expect(lines.every((l) => l.schemaVersion === 1)).toBe(true);
    expect(lines.map((l) => l.event)).toEqual(['listed', 'loaded', 'written', 'loaded', 'written']);
    expect(lines[3]).toMatchObject({
      reason: 'rotated',
      fingerprint: second.fingerprint,
      previousFingerprint: first.fingerprint,
      changed: ['urn', 'private_key'],
    });
    expectNoKeyMaterial(first, second);
    expect(fx.signals.listenerCount('SIGTERM')).toBe(0);
  });

  it('logs human lines on stderr (nothing on stdout), warns about invalid content and keeps the file', async () => {
    const first = newIdentity();
    fx.kube.create(identityData(first));
    const output = join(fx.dir, 'identity.json');
    const running = start({ output });
    await eventually(() => expect(fx.io.err.join('')).toContain(`wrote ${output}`));
    fx.kube.update(secretData({ private_key: `${first.privateKey}=`, urn: first.urn }));
    await eventually(() => expect(fx.io.err.join('')).toContain('holds an invalid identity'));
    fx.kube.remove();
    await eventually(() => expect(fx.io.err.join('')).toContain('the Secret was deleted'));
    fx.signals.emit('SIGINT');
    const result = await running;
    await fileHolds(output, first);
    const err = fx.io.err.join('');
    expect(err).toContain(`loaded identity ${first.urn} (fingerprint ${first.fingerprint}`);
    expect(err).toContain(
      `private_key: has base64 padding (=), which the Go agent rejects); not applied, keeping identity ${first.fingerprint}`,
    );
    expect(err).toContain(`keeping identity ${first.fingerprint}`);
    expect(fx.io.out).toEqual([]);
    expect(result.summary[0]).toBe(
      `watch stopped by SIGINT after 0 reload(s); last identity ${first.urn} (fingerprint ${first.fingerprint})`,
    );
    expect(result.json).toMatchObject({ reloadErrors: 1 });
    expectNoKeyMaterial(first);
  });

  it('signals the pidfile process after each rotation (not for the first write)', async () => {
    fx.kube.create(identityData(newIdentity()));
    const output = join(fx.dir, 'identity.json');
    const log = join(fx.dir, 'runner.log');
    const { spawn } = await import('node:child_process');
    const runner = spawn(process.execPath, ['-e', CHILD, log], { env: { PAR_IDENTITY_FILE: output }, stdio: 'ignore' });
    try {
      await writeFile(output, JSON.stringify({ urn: 'before' }));
      await eventually(async () => expect(await childLog(log)).toHaveLength(1));
      const pidfile = join(fx.dir, 'runner.pid');
      await writeFile(pidfile, `${runner.pid}\n`);
      const running = start({ output, pidfile, signalName: 'HUP', json: true });
      await eventually(() => expect(fx.jsonLines().map((l) => l.event)).toContain('written'));
      const next = newIdentity();
      fx.kube.update(identityData(next));
      await eventually(() => expect(fx.jsonLines().map((l) => l.event)).toContain('signalled'));
      await eventually(async () => expect((await childLog(log)).slice(1)).toEqual([`hup ${next.urn}`]));
      expect(fx.jsonLines().find((l) => l.event === 'signalled')).toMatchObject({ pid: runner.pid, signal: 'SIGHUP' });
      fx.signals.emit('SIGTERM');
      await running;
    } finally {
      runner.kill('SIGKILL');
    }
  });

  it('reports a signal it cannot send, counts it, and keeps watching', async () => {
    fx.kube.create(identityData(newIdentity()));
    const output = join(fx.dir, 'identity.json');
    const running = start({ output, pidfile: join(fx.dir, 'absent.pid'), json: true });
    await eventually(() => expect(fx.jsonLines().map((l) => l.event)).toContain('written'));
    fx.kube.update(identityData(newIdentity()));
    await eventually(() => expect(fx.jsonLines().filter((l) => l.event === 'apply-error').length).toBeGreaterThanOrEqual(1));
    expect(fx.jsonLines().find((l) => l.event === 'apply-error')).toMatchObject({ attempt: 1, error: { code: 'PIDFILE_UNREADABLE' } });
    fx.signals.emit('SIGTERM');
    expect((await running).json.reloadErrors).toBeGreaterThanOrEqual(1);
  });
});

describe('watch -- <command>', () => {
  it('starts the command with the identity, restarts it with the new one, forwards signals, and SIGTERM ends both with its status', async () => {
    const first = newIdentity();
    fx.kube.create(identityData(first));
    const log = join(fx.dir, 'child.log');
    const running = start({ command: [process.execPath, '-e', CHILD, log] });
    await eventually(async () => expect(await childLog(log)).toEqual([`start ${first.fingerprint} ${first.urn}`]));
    const second = newIdentity();
    fx.kube.update(identityData(second));
    await eventually(async () =>
      expect(await childLog(log)).toEqual([`start ${first.fingerprint} ${first.urn}`, 'term', `start ${second.fingerprint} ${second.urn}`]),
    );
    fx.signals.emit('SIGUSR1');
    await eventually(async () => expect((await childLog(log)).at(-1)).toBe('usr1'));
    fx.signals.emit('SIGTERM');
    const result = await running;
    expect((await childLog(log)).at(-1)).toBe('term');
    expect(result.json).toMatchObject({ stoppedBy: 'SIGTERM', childExitStatus: 0, reloads: 1 });
    await eventually(() => expect(fx.kube.emu.openWatches).toBe(0));
    // The identity file lived in a private temporary directory, removed on exit.
    expect(fx.io.err.join('')).toMatch(/started .* \(pid \d+\)/);
  });

  it('--on-change signal sends the signal instead of restarting', async () => {
    const first = newIdentity();
    fx.kube.create(identityData(first));
    const log = join(fx.dir, 'child.log');
    const running = start({ command: [process.execPath, '-e', CHILD, log], onChange: 'signal', signalName: 'HUP' });
    await eventually(async () => expect(await childLog(log)).toHaveLength(1));
    const second = newIdentity();
    fx.kube.update(identityData(second));
    await eventually(async () => expect(await childLog(log)).toEqual([`start ${first.fingerprint} ${first.urn}`, `hup ${second.urn}`]));
    fx.signals.emit('SIGTERM');
    await running;
  });

  it('exits with the status of a command that ends on its own', async () => {
    fx.kube.create(identityData(newIdentity()));
    const running = start({ command: [process.execPath, '-e', 'process.exit(3)'] });
    await expect(running).rejects.toMatchObject({ code: 'CHILD_EXITED', exitCode: 3 });
    await eventually(() => expect(fx.kube.emu.openWatches).toBe(0));
  });

  it('exits with the status the command chose on SIGTERM', async () => {
    fx.kube.create(identityData(newIdentity()));
    const log = join(fx.dir, 'child.log');
    fx.io.env.EXIT_ON_TERM = '7';
    const running = start({ command: [process.execPath, '-e', CHILD, log] });
    await eventually(async () => expect(await childLog(log)).toHaveLength(1));
    fx.signals.emit('SIGTERM');
    await expect(running).rejects.toMatchObject({ code: 'CHILD_EXITED', exitCode: 7 });
  });

  it('exits 127 when the command cannot be started', async () => {
    fx.kube.create(identityData(newIdentity()));
    await expect(start({ command: [join(fx.dir, 'no-such-command')] })).rejects.toMatchObject({
      code: 'CHILD_START_FAILED',
      exitCode: 127,
    });
  });
});

describe('watch --listen', () => {
  it('serves /readyz (503 until an identity is loaded), /healthz (fails when stale) and /metrics', async () => {
    // /healthz judges staleness on the command's clock: the test moves it instead of waiting for it.
    let skewMs = 0;
    fx.io.now = () => new Date(Date.now() + skewMs);
    const running = start({ listen: '127.0.0.1:0', json: true, healthzStaleSeconds: 60 });
    const listening = await eventually(() => {
      const line = fx.jsonLines().find((l) => l.event === 'listening');
      expect(line).toBeDefined();
      return line!;
    });
    const base = `http://${listening.address}`;
    const get = async (path: string) => {
      const res = await fetch(base + path);
      return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
    };
    expect((await get('/readyz')).status).toBe(503);
    const id = newIdentity();
    fx.kube.create(identityData(id));
    await eventually(() => expect(fx.jsonLines().map((l) => l.event)).toContain('loaded'));
    expect(await get('/readyz')).toMatchObject({ status: 200, body: `ok: identity ${id.fingerprint} loaded\n` });
    const metrics = await get('/metrics');
    expect(metrics.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(metrics.body).toContain(`fingerprint="${id.fingerprint}"`);
    expect(metrics.body).not.toContain(id.privateKey);
    expect((await get('/healthz')).status).toBe(200);
    // Two minutes later with no watch event or list (the emulator sends no bookmark): past the 60 s threshold.
    skewMs = 120_000;
    expect((await get('/healthz')).status).toBe(503);
    expect((await get('/nope')).status).toBe(404);
    fx.signals.emit('SIGTERM');
    await running;
    await expect(fetch(`${base}/readyz`)).rejects.toThrow();
  });
});

describe('watch stops cleanly and refuses what it cannot do', () => {
  it('SIGTERM before any identity was loaded → resolves, nothing loaded, watch closed', async () => {
    const running = start();
    await eventually(() => expect(fx.kube.emu.openWatches).toBe(1));
    fx.signals.emit('SIGTERM');
    const result = await running;
    expect(result.summary[0]).toBe('watch stopped by SIGTERM after 0 reload(s); no identity was loaded');
    await eventually(() => expect(fx.kube.emu.openWatches).toBe(0));
  });

  it.each<[string, Partial<WatchOptions>, string]>([
    ['--signal without --output', { signalPid: 1 }, '--signal/--pidfile tell a process that --output PATH changed'],
    ['--signal and --pidfile', { signalPid: 1, pidfile: '/x', output: '/y' }, 'give one of them'],
    ['--on-change signal without a command', { onChange: 'signal' }, 'add -- <command...>'],
    ['a bad --listen', { listen: 'nowhere' }, 'is not an address'],
    ['a bad --signal-name', { signalName: 'BOOM' }, 'is not a signal name'],
    ['a negative --splay', { splayMs: -1 }, '--splay must be a non-negative number'],
  ])('%s is a usage error before anything is contacted', async (_name, extra, message) => {
    await expect(start(extra)).rejects.toMatchObject({ code: 'USAGE', exitCode: 2, message: expect.stringContaining(message) });
    expect(fx.kube.emu.requests).toEqual([]);
  });

  it('refuses when the agent config does not keep the identity in a Secret', async () => {
    await writeFile(join(fx.dir, 'datadog-cluster.yaml'), 'private_action_runner:\n  enabled: true\n  identity_use_k8s_secret: false\n');
    await expect(start()).rejects.toMatchObject({ code: 'WATCH_DISABLED', exitCode: 3 });
    await writeFile(join(fx.dir, 'datadog-cluster.yaml'), 'kube_resources_namespace: datadog\n');
    await expect(start()).rejects.toMatchObject({
      code: 'WATCH_DISABLED',
      message: expect.stringContaining('private_action_runner.enabled is false'),
    });
    expect(fx.kube.emu.requests).toEqual([]);
  });
});
