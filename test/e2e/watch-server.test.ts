import { type ChildProcessWithoutNullStreams, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
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
  stopProcesses,
} from './watch-fixture.js';
import { startJsonWatch, type WatchingCli } from './watch-hostile-scenario.js';

// `watch` as a long-lived server (issue 31, point 8) and what it does with an identity it must
// refuse (point 6), against the BUILT binary: idle connections on --listen cannot take the
// descriptors an identity write needs nor silence /healthz; a 429's Retry-After is waited (seen in
// the emulator's request log, not by the test's clock); /healthz and /metrics say only what happened;
// a Secret with a 200 000-character urn is refused and the supervised runner keeps running.

vi.setConfig({ testTimeout: 4 * BINARY_WAIT_MS, hookTimeout: BINARY_WAIT_MS });

const running: ChildProcessWithoutNullStreams[] = [];
const sockets: Socket[] = [];
let kube: KubeFixture;
let dir: string;
let kubeconfig: string;

beforeEach(async () => {
  kube = await kubeFixture();
  dir = await mkdtemp(join(tmpdir(), 'par-watch-server-'));
  await writeFile(join(dir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
  kubeconfig = join(dir, 'kubeconfig');
  await kube.emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await stopProcesses(running);
  await kube.close();
  await rm(dir, { recursive: true, force: true });
});

async function startWatch(output: string, extra: string[] = []): Promise<WatchingCli> {
  const run = await startJsonWatch(dir, kubeconfig, output, extra);
  running.push(run.child);
  return run;
}

/** One GET on a fresh connection; the status and body, or undefined when no answer came within 2 s. */
function get(address: string, path: string): Promise<{ status: number; body: string } | undefined> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((resolve) => {
    const req = request({ host, port, path, agent: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const prlimitMissing =
  existsSync('/usr/bin/prlimit') || existsSync('/bin/prlimit')
    ? ''
    : ' [SKIPPED: needs prlimit (util-linux) to lower the watcher’s open-file limit]';

describe('watch --listen under idle connections', () => {
  it.skipIf(prlimitMissing !== '')(
    `400 idle connections on loopback: the next identity is written and /healthz answers${prlimitMissing}`,
    async () => {
      kube.create(identityData(newIdentity()));
      const output = join(dir, 'identity.json');
      const run = await startWatch(output);
      await eventually(() => expect(run.lines().filter((l) => l.event === 'written')).toHaveLength(1), BINARY_WAIT_MS);
      // The machine had 1 024 open files; here the watcher gets 64 more than it uses now, and
      // 400 connections are opened to it (none sends a byte), far more than that.
      const pid = run.child.pid!;
      const limit = openFds(pid) + 64;
      execFileSync('prlimit', ['--pid', String(pid), `--nofile=${limit}:${limit}`]);
      const port = Number(run.address.slice(run.address.lastIndexOf(':') + 1));
      await Promise.all(
        Array.from({ length: 400 }, () => {
          const socket = connect(port, '127.0.0.1');
          sockets.push(socket);
          socket.on('error', () => undefined);
          return new Promise<void>((resolve) => {
            socket.once('connect', () => resolve());
            socket.once('close', () => resolve());
          });
        }),
      );
      const next = newIdentity();
      kube.update(identityData(next));
      await eventually(() => expect(run.lines().filter((l) => l.event === 'written')).toHaveLength(2), BINARY_WAIT_MS);
      expect(JSON.parse(await readFile(output, 'utf8')).urn).toBe(next.urn);
      expect(run.lines().filter((l) => l.event === 'apply-error')).toEqual([]);
      // Still holding every socket it could: /healthz answers (the idle ones are closed after seconds).
      await eventually(async () => expect((await get(run.address, '/healthz'))?.status).toBe(200), BINARY_WAIT_MS);
      // It holds at most its cap of them: never near its limit.
      expect(openFds(pid)).toBeLessThan(limit - 16);
      for (const socket of sockets.splice(0)) socket.destroy();
      run.child.kill('SIGTERM');
      expect(await run.exit, run.stderr()).toEqual({ code: 0, signal: null });
    },
  );
});

describe('watch and a 429 with Retry-After', () => {
  it('waits what Retry-After asks before the next list and the next watch (request log)', async () => {
    const first = newIdentity();
    kube.create(identityData(first));
    // PAR_IDENTITY_RETRY_INITIAL_MS=20: without Retry-After the retries would come within 40 ms.
    kube.emu.faults.failNext({ verb: 'list', resource: 'secrets' }, { times: 2, code: 429, headers: { 'Retry-After': '2' } });
    const run = await startWatch(join(dir, 'identity.json'));
    await eventually(() => expect(run.lines().filter((l) => l.event === 'loaded')).toHaveLength(1), BINARY_WAIT_MS);
    const lists = kube.requests('list');
    expect(lists.map((r) => r.status)).toEqual([429, 429, 200]);
    // Each retry came at least the 2 s asked after the 429 was sent (its request's arrival is earlier still).
    expect(lists[1]!.at - lists[0]!.at).toBeGreaterThanOrEqual(1_990);
    expect(lists[2]!.at - lists[1]!.at).toBeGreaterThanOrEqual(1_990);
    expect(
      run
        .lines()
        .filter((l) => l.event === 'watch-error')
        .map((l) => l.retryInMs),
    ).toEqual([2000, 2000]);

    // The same on the watch: it ends, its re-open is answered 429, the restart waits.
    await eventually(() => expect(kube.emu.openWatches).toBe(1), BINARY_WAIT_MS);
    kube.emu.faults.failNext({ verb: 'watch', resource: 'secrets' }, { code: 429, headers: { 'Retry-After': '3' } });
    kube.emu.faults.endWatches();
    // The restart resumes the watch from where it was (no list): the watch after the refused one.
    const watches = () => kube.requests('watch');
    const refusedAt = await eventually(() => {
      const at = watches().findIndex((r) => r.status === 429);
      expect(at).toBeGreaterThanOrEqual(0);
      expect(watches().length).toBeGreaterThan(at + 1);
      return at;
    }, BINARY_WAIT_MS);
    expect(watches()[refusedAt + 1]!.at - watches()[refusedAt]!.at).toBeGreaterThanOrEqual(2_990);
    expect(
      run
        .lines()
        .filter((l) => l.event === 'watch-error')
        .map((l) => l.retryInMs),
    ).toEqual([2000, 2000, 3000]);
    await eventually(() => expect(kube.emu.openWatches).toBe(1), BINARY_WAIT_MS);
    const next = newIdentity();
    kube.update(identityData(next));
    await eventually(() => expect(run.lines().filter((l) => l.event === 'written')).toHaveLength(2), BINARY_WAIT_MS);
    run.child.kill('SIGTERM');
    expect(await run.exit, run.stderr()).toEqual({ code: 0, signal: null });
  });
});

describe('health says only what happened', () => {
  it('before any list succeeded, /healthz says so (no "last list N s ago") and /metrics has no last-event time', async () => {
    kube.create(identityData(newIdentity()));
    const held = kube.emu.faults.hang({ verb: 'list', resource: 'secrets' });
    const run = await startWatch(join(dir, 'identity.json'));
    await eventually(() => expect(held.hits).toBe(1), BINARY_WAIT_MS);
    const early = await get(run.address, '/healthz');
    expect(early?.status).toBe(200);
    expect(early?.body).toMatch(/^ok: started \d+ s ago; no watch event or successful list yet\n$/);
    expect((await get(run.address, '/metrics'))?.body).not.toMatch(/^par_last_event_timestamp_seconds/m);
    held.cancel();
    await eventually(() => expect(run.lines().filter((l) => l.event === 'written')).toHaveLength(1), BINARY_WAIT_MS);
    expect((await get(run.address, '/healthz'))?.body).toMatch(/^ok: last watch event or list \d+ s ago\n$/);
    run.child.kill('SIGTERM');
    expect(await run.exit, run.stderr()).toEqual({ code: 0, signal: null });
  });
});

describe('metrics show the identity in service, never one that failed to be written', () => {
  it('the next identity cannot be written: par_identity_info keeps the written one, /readyz is 503', async () => {
    const first = newIdentity();
    kube.create(identityData(first));
    const outDir = join(dir, 'out');
    await mkdir(outDir);
    const run = await startWatch(join(outDir, 'identity.json'));
    await eventually(() => expect(run.lines().filter((l) => l.event === 'written')).toHaveLength(1), BINARY_WAIT_MS);
    expect((await get(run.address, '/metrics'))?.body).toContain(`fingerprint="${first.fingerprint}"`);
    // Its directory gone (a volume unmounted), the next identity fails to be written.
    await rm(outDir, { recursive: true });
    const next = newIdentity();
    kube.update(identityData(next));
    await eventually(() => expect(run.lines().some((l) => l.event === 'apply-error')).toBe(true), BINARY_WAIT_MS);
    const metrics = (await get(run.address, '/metrics'))!.body;
    expect(metrics).toContain(`fingerprint="${first.fingerprint}"`);
    expect(metrics).not.toContain(next.fingerprint);
    expect((await get(run.address, '/readyz'))?.status).toBe(503);
    run.child.kill('SIGTERM');
    expect(await run.exit, run.stderr()).toEqual({ code: 0, signal: null });
  });
});

describe('watch refuses an identity it must not apply, and the runner keeps running', () => {
  it('a Secret whose urn is 200 000 characters: rejected, the supervised runner neither stopped nor restarted', async () => {
    const first = newIdentity();
    kube.create(identityData(first));
    const log = join(dir, 'runner.log');
    const script = [
      "const fs = require('node:fs');",
      "process.on('SIGTERM', () => { fs.appendFileSync(process.argv[1], 'term\\n'); process.exit(0); });",
      "fs.appendFileSync(process.argv[1], 'start ' + process.env.PAR_IDENTITY_URN + '\\n');",
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const run = await startWatch(join(dir, 'identity.json'), ['--', process.execPath, '-e', script, log]);
    const lines = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    await eventually(async () => expect(await lines()).toEqual([`start ${first.urn}`]), BINARY_WAIT_MS);
    const childPid = run.lines().find((l) => l.event === 'child-started')!.pid as number;
    const hostile = newIdentity();
    kube.update(identityData({ ...hostile, urn: `urn:dd:apps:on-prem-runner:us1:1:${'r'.repeat(200_000)}` }));
    const rejected = await eventually(() => {
      const line = run.lines().find((l) => l.event === 'rejected');
      expect(line, run.stderr()).toBeDefined();
      return line!;
    }, BINARY_WAIT_MS);
    expect((rejected.error as { message: string }).message).toBe('urn: is 200033 characters long (at most 368); not printed');
    expect(run.stdout().length).toBeLessThan(64 * 1024);
    expect(() => process.kill(childPid, 0)).not.toThrow();
    expect(await lines()).toEqual([`start ${first.urn}`]);
    expect(
      run
        .lines()
        .filter((l) => ['child-restarted', 'apply-error', 'written'].includes(l.event as string))
        .map((l) => l.event),
    ).toEqual(['written']);
    // The next valid identity is applied as usual.
    const next = newIdentity();
    kube.update(identityData(next));
    await eventually(async () => expect(await lines()).toEqual([`start ${first.urn}`, 'term', `start ${next.urn}`]), BINARY_WAIT_MS);
    run.child.kill('SIGTERM');
    expect((await run.exit).code, run.stderr()).toBe(0);
  });
});
