// `npm run bench` (soak part; `npm run bench:soak` alone): does a long-running `par-identity watch` keep
// its memory? Watch processes of the built CLI (with --output) follow a Secret the bench changes all
// along ("with changes") and, beside them, a Secret nothing changes ("without changes"), against the
// Kubernetes API emulator in this process. The emulator also ends every open watch now and then (as the
// apiserver does when a watch times out), drops their connections less often (the watchers restart
// with backoff) and forgets its history (the next resume gets 410 Expired and the informer lists
// again); each watcher re-lists on its own --relist-interval. RSS is read from /proc every few seconds;
// the figure is its drift, the median over a group's watchers at the end less the same median after the
// first twelfth of the run (5 min of an hour), beside the 2 MiB bound. Every watcher of the changing
// Secret must end on its last content. docs/architecture.md, "Start-up and memory", has the figures.
//
//   node scripts/bench-soak.mjs [--soak-minutes 6 (or BENCH_SOAK_MINUTES)] [--change-ms 250]
//     [--watchers 5] [--idle-watchers 5] [--end-watches-seconds 20] [--drop-watches-seconds 150]
//     [--compact-seconds 90] [--relist-seconds 60] [--sample-seconds 5] [--bin PATH] [--heap-snapshots DIR]
//   Issue 25's hour: --soak-minutes 60 --change-ms 5000 (and watch's own --relist-seconds 600).
//   --bin: another build's bin/par-identity.js (e.g. a checkout of the previous commit), to compare.
//   --heap-snapshots DIR: the watchers run with --heapsnapshot-signal and write one snapshot each after
//   the first twelfth and at the end into DIR/<group>-<n>/; compare two with scripts/bench/heap-diff.mjs.
//   Writing a snapshot costs RSS itself: with it, the drift is not the figure.
//   BENCH_SOAK_NODE_ARGS: more node flags for the watchers (e.g. --trace-gc).
//   The start waits for every watcher's first identity and open watch for as long as the watchers keep
//   working (scripts/bench/progress-wait.mjs: CPU time or output), so a loaded machine only slows it;
//   a watcher that exits ends the bench at once with the end of its stderr.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { cpuTicks, untilDone } from './bench/progress-wait.mjs';
import { bundleSources, ROOT } from './dev-bundle.mjs';

process.env.PAR_IDENTITY_CLOUD_METADATA_URL = 'http://127.0.0.1:9'; // never the real metadata address
const { values: opt } = parseArgs({
  options: {
    'soak-minutes': { type: 'string', default: process.env.BENCH_SOAK_MINUTES ?? '6' },
    'change-ms': { type: 'string', default: '250' },
    watchers: { type: 'string', default: '5' },
    'idle-watchers': { type: 'string', default: '5' },
    'end-watches-seconds': { type: 'string', default: '20' },
    'compact-seconds': { type: 'string', default: '90' },
    'relist-seconds': { type: 'string', default: '60' },
    'sample-seconds': { type: 'string', default: '5' },
    'drop-watches-seconds': { type: 'string', default: '150' },
    'heap-snapshots': { type: 'string' },
    bin: { type: 'string' },
  },
});
const num = (name) => {
  const v = Number(opt[name]);
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number, got ${opt[name]}`);
  return v;
};
const RUN_MS = num('soak-minutes') * 60_000;
const CHANGE_MS = num('change-ms');
const END_WATCHES_MS = num('end-watches-seconds') * 1000;
const COMPACT_MS = num('compact-seconds') * 1000;
const SAMPLE_MS = num('sample-seconds') * 1000;
const BASELINE_MS = RUN_MS / 12;
const BOUND_MIB = 2;
const NAMESPACE = 'datadog';
const CHANGING = 'soak-changing';
const STEADY = 'soak-steady';
const BIN = opt.bin ? resolve(opt.bin) : join(ROOT, 'bin', 'par-identity.js');
const DROP_WATCHES_MS = num('drop-watches-seconds') * 1000;
const SNAPSHOTS = opt['heap-snapshots'] ? resolve(opt['heap-snapshots']) : undefined;

const out = await bundleSources('bench-soak', { 'kube-emulator': 'emulators/kube/index.ts', identity: 'src/identity/index.ts' });
const { startKubeEmulator, seedNamespaces } = await import(join(out, 'kube-emulator.js'));
const { buildUrn, encodePrivateJwk, generateIdentityKey } = await import(join(out, 'identity.js'));

const b64 = (s) => Buffer.from(s, 'utf8').toString('base64');
function identity() {
  const key = generateIdentityKey();
  const urn = buildUrn({ region: 'us1', orgId: 1234567, runnerId: crypto.randomUUID() });
  return { fingerprint: key.kid, data: { private_key: b64(encodePrivateJwk(key)), urn: b64(urn) } };
}
// A ring of identities: a change every 50 ms must not measure key generation.
const pool = Array.from({ length: 64 }, identity);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function rssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

const emu = await startKubeEmulator({ bookmarkIntervalMs: 60_000 });
seedNamespaces(emu, [NAMESPACE]);
for (const name of [CHANGING, STEADY])
  emu.createObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NAMESPACE }, type: 'Opaque', data: pool[0].data });
const dir = await mkdtemp(join(tmpdir(), 'par-bench-soak-'));
const kubeconfig = join(dir, 'kubeconfig');
await emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
await writeFile(join(dir, 'datadog-cluster.yaml'), `kube_resources_namespace: ${NAMESPACE}\nprivate_action_runner:\n  enabled: true\n`);
if (SNAPSHOTS) await mkdir(SNAPSHOTS, { recursive: true });

/** One `watch --json --output` process; it counts what it reports and keeps the last fingerprint it loaded. */
function startWatcher(group, secret, index) {
  const cwd = SNAPSHOTS ? join(SNAPSHOTS, `${group}-${index}`) : dir;
  const nodeArgs = [
    ...(SNAPSHOTS ? ['--heapsnapshot-signal=SIGUSR2'] : []),
    ...(process.env.BENCH_SOAK_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ];
  const args = [
    ...nodeArgs,
    BIN,
    'watch',
    '-c',
    dir,
    '--kubeconfig',
    kubeconfig,
    '--secret-name',
    secret,
    '--output',
    join(dir, `${group}-${index}.json`),
    '--relist-interval',
    `${opt['relist-seconds']}s`,
    '--json',
  ];
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    PAR_IDENTITY_CLOUD_METADATA_URL: process.env.PAR_IDENTITY_CLOUD_METADATA_URL,
    DOCKER_DD_AGENT: '',
  };
  const w = { group, cwd, pid: 0, lines: 0, loaded: 0, errors: 0, last: undefined, exited: undefined, samples: [] };
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  w.pid = child.pid;
  w.child = child;
  // The end of its stderr, to say why a watcher exited.
  w.stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text) => {
    w.stderr = (w.stderr + text).slice(-2000);
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    w.lines++;
    if (!line.startsWith('{')) return;
    const e = JSON.parse(line);
    if (e.event === 'loaded') {
      w.loaded++;
      w.last = e.fingerprint;
    } else if (e.event === 'watch-error' || e.event === 'apply-error') w.errors++;
  });
  w.done = new Promise((r) =>
    child.once('exit', (code, signal) => {
      w.exited = signal ?? code;
      r(w.exited);
    }),
  );
  return w;
}

async function snapshot(watchers, label) {
  if (!SNAPSHOTS) return;
  await Promise.all(
    watchers.map(async (w) => {
      const where = w.cwd;
      const before = new Set(await readdir(where));
      w.child.kill('SIGUSR2');
      const deadline = Date.now() + 120_000;
      for (;;) {
        const now = (await readdir(where)).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
        if (now.length) {
          // Written once its size stops changing.
          let size = -1;
          for (;;) {
            const s = (await stat(join(where, now[0])).catch(() => ({ size: 0 }))).size;
            if (s === size && s > 0) break;
            size = s;
            await sleep(500);
          }
          await rename(join(where, now[0]), join(where, `${label}.heapsnapshot`));
          return;
        }
        if (Date.now() > deadline) throw new Error(`no heap snapshot from watcher ${w.pid}`);
        await sleep(200);
      }
    }),
  );
}

const groups = { changing: [], steady: [] };
let changes = 0;
let endedWatches = 0;
let droppedWatches = 0;
let compactions = 0;
const timers = [];
try {
  for (let i = 0; i < num('watchers'); i++) {
    if (SNAPSHOTS) await mkdir(join(SNAPSHOTS, `changing-${i}`), { recursive: true });
    groups.changing.push(startWatcher('changing', CHANGING, i));
  }
  for (let i = 0; i < num('idle-watchers'); i++) {
    if (SNAPSHOTS) await mkdir(join(SNAPSHOTS, `steady-${i}`), { recursive: true });
    groups.steady.push(startWatcher('steady', STEADY, i));
  }
  const all = [...groups.changing, ...groups.steady];
  // Ten node processes starting at once on a loaded machine can take minutes: wait while they work.
  const started = {
    progress: async () => [emu.requests.length, ...(await Promise.all(all.map(async (w) => [w.lines, await cpuTicks(w.pid)])))],
    failed: () => {
      const gone = all.find((w) => w.exited !== undefined);
      return gone && `watcher ${gone.pid} exited (${gone.exited}): ${gone.stderr.trim() || 'nothing on stderr'}`;
    },
  };
  await untilDone({ ...started, check: () => all.every((w) => w.loaded > 0), what: 'every watcher to load its identity' });
  await untilDone({ ...started, check: () => emu.openWatches >= all.length, what: 'every watch to open' });
  console.error(`soak: ${all.length} watchers loaded and watching; ${(RUN_MS / 60_000).toFixed(1)} min from now`);

  const start = Date.now();
  if (CHANGE_MS > 0 && groups.changing.length) {
    timers.push(
      setInterval(() => {
        const cur = emu.getObject('v1', 'Secret', NAMESPACE, CHANGING);
        changes++;
        emu.updateObject({ ...cur, data: pool[changes % pool.length].data });
      }, CHANGE_MS),
    );
  }
  if (DROP_WATCHES_MS > 0) {
    timers.push(
      setInterval(() => {
        droppedWatches += emu.faults.dropWatches();
      }, DROP_WATCHES_MS),
    );
  }
  if (END_WATCHES_MS > 0) {
    timers.push(
      setInterval(() => {
        endedWatches += emu.faults.endWatches();
      }, END_WATCHES_MS),
    );
  }
  if (COMPACT_MS > 0) {
    timers.push(
      setInterval(() => {
        compactions++;
        emu.compact();
        emu.faults.endWatches();
      }, COMPACT_MS),
    );
  }
  // The emulator records every request; the bench must not measure its own log either.
  timers.push(setInterval(() => emu.requests.splice(0), 10_000));

  let baselineTaken = false;
  for (;;) {
    const t = Date.now() - start;
    for (const w of all) w.samples.push({ t, rss: await rssMiB(w.pid) });
    if (!baselineTaken && t >= BASELINE_MS) {
      baselineTaken = true;
      for (const w of all) w.baseline = w.samples.at(-1).rss;
      await snapshot(all, 'baseline');
      console.error(
        `soak: baseline after ${(t / 60_000).toFixed(1)} min: RSS median ${median(groups.changing.map((w) => w.baseline)).toFixed(1)} MiB (changing), ${median(groups.steady.map((w) => w.baseline)).toFixed(1)} MiB (steady)`,
      );
    }
    if (all.some((w) => w.exited !== undefined)) {
      const gone = all.find((w) => w.exited !== undefined);
      throw new Error(`a watcher exited during the soak (${gone.exited}): ${gone.stderr.trim() || 'nothing on stderr'}`);
    }
    if (t >= RUN_MS) break;
    await sleep(Math.min(SAMPLE_MS, RUN_MS - t));
  }
  for (const t of timers) clearInterval(t);
  // Every watcher of the changing Secret ends on its last content.
  const last = pool[changes % pool.length].fingerprint;
  await untilDone({
    ...started,
    check: () => groups.changing.every((w) => w.last === last),
    what: 'every watcher to hold the last change',
  });
  for (const w of all) w.end = await rssMiB(w.pid);
  await snapshot(all, 'end');

  const rows = [];
  for (const [name, ws] of [
    ['with changes', groups.changing],
    ['without changes', groups.steady],
  ]) {
    if (!ws.length) continue;
    const base = median(ws.map((w) => w.baseline));
    const end = median(ws.map((w) => w.end));
    const peak = median(ws.map((w) => Math.max(...w.samples.map((s) => s.rss))));
    const drift = end - base;
    rows.push([
      `watch RSS drift, ${name} (${ws.length} watchers)`,
      `${base.toFixed(1)} → ${end.toFixed(1)} MiB: ${drift >= 0 ? '+' : ''}${drift.toFixed(1)} MiB (peak ${peak.toFixed(1)})`,
      `≤ ${BOUND_MIB} MiB`,
      Math.abs(drift) <= BOUND_MIB ? 'ok' : 'OVER',
    ]);
  }
  console.log(
    `\nsoak: node ${process.version}, ${(RUN_MS / 60_000).toFixed(1)} min, baseline after ${(BASELINE_MS / 60_000).toFixed(1)} min; ${changes} changes (every ${CHANGE_MS} ms), ${endedWatches} watch ends, ${droppedWatches} dropped watch connections, ${compactions} compactions (410), re-list every ${opt['relist-seconds']} s; every watcher held the last change; watch errors ${all.reduce((n, w) => n + w.errors, 0)}${opt.bin ? `; bin ${BIN}` : ''}`,
  );
  if (SNAPSHOTS)
    console.log(`heap snapshots in ${SNAPSHOTS}: the end RSS includes what writing the first one cost, so the drift is not the figure`);
  const width = Math.max(...rows.map(([n]) => n.length));
  for (const [n, v, goal, verdict] of rows) console.log(`${n.padEnd(width)}  ${v}  (${goal}: ${verdict})`);
} finally {
  for (const t of timers) clearInterval(t);
  for (const ws of Object.values(groups)) for (const w of ws) if (w.exited === undefined) w.child.kill('SIGTERM');
  await Promise.all(Object.values(groups).flatMap((ws) => ws.map((w) => w.done)));
  await emu.close();
  await rm(dir, { recursive: true, force: true });
}
