// `npm run bench` (watch part): hot-reload latency across 100 watchers, requests of an idle watcher,
// and the memory of one idle watch process. The TypeScript sources are bundled on the fly (esbuild,
// dependencies left external) into .tmp/bench-watch/, so this runs against the code as it is.
//   BENCH_WATCHERS (100), BENCH_ROTATIONS (5), BENCH_IDLE_SECONDS (60)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundleSources, ROOT, until } from './dev-bundle.mjs';

process.env.PAR_IDENTITY_CLOUD_METADATA_URL = 'http://127.0.0.1:9'; // never the real metadata address
process.env.DOCKER_DD_AGENT = ''; // never the container provider: no docker daemon or kubelet of this machine
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 100);
const ROTATIONS = Number(process.env.BENCH_ROTATIONS ?? 5);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const NAMESPACE = 'datadog';
const SECRET = 'private-action-runner-identity';
const BIN = join(ROOT, 'bin', 'par-identity.js');

const out = await bundleSources('bench-watch', {
  reload: 'src/reload/index.ts',
  kube: 'src/kube/cluster-connection.ts',
  kubeconfig: 'src/kube/kubeconfig.ts',
  'kube-emulator': 'emulators/kube/index.ts',
  identity: 'src/identity/index.ts',
  'demo-runner': 'emulators/demo-runner/main.ts',
});
const { watchIdentity } = await import(join(out, 'reload.js'));
const { startKubeEmulator, seedNamespaces } = await import(join(out, 'kube-emulator.js'));
const { buildUrn, encodePrivateJwk, generateIdentityKey } = await import(join(out, 'identity.js'));
const { clusterTargetFromConfig } = await import(join(out, 'kube.js'));
const { parseKubeconfig } = await import(join(out, 'kubeconfig.js'));

const b64 = (s) => Buffer.from(s, 'utf8').toString('base64');
function identity() {
  const key = generateIdentityKey();
  const urn = buildUrn({ region: 'us1', orgId: 1234567, runnerId: crypto.randomUUID() });
  return { fingerprint: key.kid, data: { private_key: b64(encodePrivateJwk(key)), urn: b64(urn) } };
}
const pick = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

const emu = await startKubeEmulator();
seedNamespaces(emu, [NAMESPACE]);
emu.createObject({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: SECRET, namespace: NAMESPACE },
  type: 'Opaque',
  data: identity().data,
});
const emulatorConfig = await parseKubeconfig(emu.kubeconfig({ namespace: NAMESPACE }), '/');
// A connection of its own per watcher, as each runner process has.
const connection = () => clusterTargetFromConfig(emulatorConfig, { env: {}, source: 'the emulator kubeconfig' });
const dir = await mkdtemp(join(tmpdir(), 'par-bench-watch-'));
const rows = [];
try {
  // 1. One Secret update → every watcher reloaded.
  const watchers = Array.from({ length: WATCHERS }, () => watchIdentity({ connection: connection(), namespace: NAMESPACE, name: SECRET }));
  await Promise.all(watchers.map((w) => w.ready));
  await until(() => emu.openWatches === WATCHERS, 30_000, 'every watch to open');
  const latencies = [];
  for (let r = 0; r < ROTATIONS; r++) {
    const next = identity();
    const seen = new Map();
    const listeners = watchers.map((w, i) => {
      const listener = (e) => {
        if (e.type === 'loaded' && e.fingerprint === next.fingerprint) seen.set(i, performance.now());
      };
      w.events.on('event', listener);
      return listener;
    });
    const cur = emu.getObject('v1', 'Secret', NAMESPACE, SECRET);
    const t0 = performance.now();
    emu.updateObject({ ...cur, data: next.data });
    await until(() => seen.size === WATCHERS, 30_000, `rotation ${r + 1} to reach every watcher`);
    for (const t of seen.values()) latencies.push(t - t0);
    for (const [i, w] of watchers.entries()) w.events.off('event', listeners[i]);
  }
  await Promise.all(watchers.map((w) => w.stop()));
  latencies.sort((a, b) => a - b);
  rows.push([
    `Secret update → all ${WATCHERS} watchers reloaded (${ROTATIONS} rotations)`,
    `p50 ${pick(latencies, 0.5).toFixed(1)} ms, p99 ${pick(latencies, 0.99).toFixed(1)} ms, max ${latencies.at(-1).toFixed(1)} ms`,
  ]);

  // 2. Requests an idle watcher sends once its list and watch are in place.
  const idle = watchIdentity({ connection: connection(), namespace: NAMESPACE, name: SECRET });
  await idle.ready;
  await until(() => emu.openWatches === 1, 10_000, 'the idle watch to open');
  const before = emu.requests.length;
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const extra = emu.requests.slice(before);
  const stillOpen = emu.openWatches === 1;
  await idle.stop();
  rows.push([
    `requests of an idle watcher in ${IDLE_SECONDS} s (beyond its list + watch)`,
    `${extra.length}${extra.length ? ` (${extra.map((r) => r.verb).join(', ')})` : ''}; watch still open: ${stillOpen ? 'yes' : 'NO'}`,
  ]);

  // 3. Memory of one idle watch process: the CLI once `watch` is wired, else a process running the library.
  const kubeconfig = join(dir, 'kubeconfig');
  await emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
  await writeFile(join(dir, 'datadog-cluster.yaml'), `private_action_runner:\n  enabled: true\nkube_resources_namespace: ${NAMESPACE}\n`);
  const wired = spawnSync(process.execPath, [BIN, 'watch', '--help'], { encoding: 'utf8' }).stdout.includes('Usage: par-identity watch');
  const [what, args, readyEvent] = wired
    ? ['par-identity watch', [BIN, 'watch', '-c', dir, '--kubeconfig', kubeconfig, '--json'], 'loaded']
    : [
        'library in a process (watch not wired yet)',
        [join(out, 'demo-runner.js'), '--kubeconfig', kubeconfig, '--namespace', NAMESPACE, '--secret-name', SECRET, '--no-calls'],
        'ready',
      ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'], cwd: ROOT });
  const lines = createInterface({ input: child.stdout });
  await new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      if (JSON.parse(line).event === readyEvent) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${what} exited early (${code})`)));
  });
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
  const rssKb = Number(
    /VmRSS:\s+(\d+)/.exec(status)?.[1] ?? spawnSync('ps', ['-o', 'rss=', '-p', String(child.pid)], { encoding: 'utf8' }).stdout.trim(),
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  rows.push([`RSS of one idle watch process: ${what}`, `${(rssKb / 1024).toFixed(1)} MiB`]);
} finally {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
}

console.log(`\nwatch: node ${process.version}, Kubernetes API emulator in-process`);
const width = Math.max(...rows.map(([name]) => name.length));
for (const [name, value] of rows) console.log(`${name.padEnd(width)}  ${value}`);
