// `node scripts/bench-kube-client.mjs` (after `npm run build`, on Node 26): the figures behind the
// choice of one Kubernetes client (docs/kubernetes-client.md): RSS of an idle `watch`, wall time and
// peak RSS of two commands that talk to the cluster (`status --secret`, `rotate-par-identity
// --dry-run`), `watch` until its first identity, and the size of every module in dist/.
//   BENCH_RUNS (10): runs per timing, after 2 warm-ups; the idle RSS is the median of 5.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, startEmulator } from './start-emulator.mjs';
import { idleWatch as idleWatchOf } from './bench/idle-watch.mjs';

process.env.PAR_IDENTITY_CLOUD_METADATA_URL = 'http://127.0.0.1:9';
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const API_KEY = '00000000000000000000000000emu0ak';
const APP_KEY = '0000000000000000000000000000000000emu0pk';
const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function wallTime(args, env) {
  const samples = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const start = process.hrtime.bigint();
    const run = spawnSync(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    if (run.status !== 0) throw new Error(`par-identity ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
    if (i >= 2) samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(samples);
}

/** Peak RSS (MiB) of one run, median of 5: getrusage(RUSAGE_CHILDREN) through python3, as scripts/bench.mjs. */
function peakRss(args, env) {
  const script =
    'import resource,subprocess,sys\nr=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)\nprint(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)';
  const peaks = [];
  for (let i = 0; i < 5; i++) {
    const out = spawnSync('python3', ['-c', script, process.execPath, BIN, ...args], { env, encoding: 'utf8' })
      .stdout.trim()
      .split(' ');
    if (out[0] !== '0') throw new Error(`par-identity ${args.join(' ')} failed (${out[0]})`);
    peaks.push(Number(out[1]) / 1024);
  }
  return median(peaks);
}

/** Milliseconds from spawn to the `loaded` line, and the RSS (MiB) 2 s later. */
async function idleWatch(args, env) {
  const { loadedMs, mib } = await idleWatchOf(process.execPath, [BIN, ...args], env);
  return { loadedMs, rss: mib('VmRSS') };
}

const dir = await mkdtemp(join(tmpdir(), 'par-bench-kube-'));
const kubeconfig = join(dir, 'kubeconfig');
const { info, stop } = await startEmulator(['--kube', '--kubeconfig-out', kubeconfig]);
try {
  // The lab's own cluster config (emulators/lab.ts): the settings of the cluster agent the emulator seeds, so issue 30's
  // comparison with that agent agrees.
  const cluster = info.lab.clusterConfig;
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    PAR_IDENTITY_CLOUD_METADATA_URL: process.env.PAR_IDENTITY_CLOUD_METADATA_URL,
    DOCKER_DD_AGENT: '',
    DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
    DD_API_KEY: API_KEY,
    DD_APP_KEY: APP_KEY,
  };
  const rotate = ['rotate-par-identity', '-c', cluster, '--kubeconfig', kubeconfig];
  if (spawnSync(process.execPath, [BIN, ...rotate], { env, stdio: 'ignore' }).status !== 0) throw new Error('rotate-par-identity failed');
  const rows = [];
  const status = ['status', '--secret', '-c', cluster, '--kubeconfig', kubeconfig];
  rows.push(['status --secret', `${wallTime(status, env).toFixed(1)} ms, peak RSS ${peakRss(status, env).toFixed(1)} MiB`]);
  rows.push([
    'rotate-par-identity --dry-run',
    `${wallTime([...rotate, '--dry-run'], env).toFixed(1)} ms, peak RSS ${peakRss([...rotate, '--dry-run'], env).toFixed(1)} MiB`,
  ]);
  const watches = [];
  for (let i = 0; i < 5; i++) watches.push(await idleWatch(['watch', '-c', cluster, '--kubeconfig', kubeconfig, '--json'], env));
  rows.push(['watch: spawn → first identity loaded', `${median(watches.map((w) => w.loadedMs)).toFixed(1)} ms`]);
  rows.push([
    'idle watch RSS (median of 5)',
    `${median(watches.map((w) => w.rss)).toFixed(1)} MiB (${watches.map((w) => w.rss.toFixed(1)).join(', ')})`,
  ]);
  const modules = readdirSync(DIST).filter((f) => f.endsWith('.js') && f !== 'emulators.js');
  for (const f of modules) rows.push([`dist/${f}`, `${(statSync(join(DIST, f)).size / 1024).toFixed(1)} KiB`]);
  rows.push([
    'dist/*.js shipped, total (without emulators.js)',
    `${(modules.reduce((n, f) => n + statSync(join(DIST, f)).size, 0) / 1024).toFixed(1)} KiB`,
  ]);
  console.log(`\nnode ${process.version}; ${RUNS} runs per timing after 2 warm-ups (median)`);
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value] of rows) console.log(`${name.padEnd(width)}  ${value}`);
} finally {
  await stop();
  await rm(dir, { recursive: true, force: true });
}
