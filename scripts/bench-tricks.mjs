// `node scripts/bench-tricks.mjs` (after `npm run build:sea`, which builds dist/ too): each start-up and
// memory trick of docs/architecture.md, "Start-up and memory", measured with and without it in the same
// run, on the Node running this script (use Node 26, the single executables' Node):
//   - the ICU-free timestamp (src/time/iso.ts): peak RSS of a process that formats one timestamp with
//     Date.prototype.toISOString, and of one that formats it with isoString;
//   - the forced garbage collection of an idle `watch` (src/watch/startup-memory.ts): RSS of an idle
//     watch of the npm build, and of a copy of that build in which the collection is disabled;
//   - the launcher's restart of `watch` without V8's optimising compilers (bin/par-identity.js): RSS
//     of an idle watch of the npm build, and of a copy whose launcher does not restart it;
//   - the V8 code cache of the single executable's Kubernetes client asset (scripts/build-sea.mjs): peak
//     RSS and wall time of compiling and loading that asset (dist/sea-client-node.cjs) with the cache and
//     without it.
// Nothing here reaches a non-loopback address (the emulators, a closed metadata port).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { BIN, startEmulator } from './start-emulator.mjs';
import { idleWatch } from './bench/idle-watch.mjs';
import { resetPageCache } from './bench/page-cache.mjs';

process.env.PAR_IDENTITY_CLOUD_METADATA_URL = 'http://127.0.0.1:9';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Peak RSS (MiB) of one run, from getrusage(RUSAGE_CHILDREN) (python3), and its wall time (ms). */
function peak(cmd, args, env) {
  const script =
    'import resource,subprocess,sys,time\nt=time.monotonic()\nr=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL)\nprint(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, (time.monotonic()-t)*1000)';
  const out = spawnSync('python3', ['-c', script, cmd, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    .stdout.trim()
    .split(' ');
  if (out[0] !== '0') throw new Error(`${cmd} ${args.join(' ')} failed (${out[0]})`);
  return { rss: Number(out[1]) / 1024, ms: Number(out[2]) };
}

function medianPeak(cmd, args, env) {
  const runs = Array.from({ length: RUNS }, () => peak(cmd, args, env));
  return { rss: median(runs.map((r) => r.rss)), ms: median(runs.map((r) => r.ms)) };
}

/** VmRSS (MiB) of an idle `watch`, 2 s after it handed on the identity. */
async function idleWatchRss(bin, args, env) {
  return (await idleWatch(process.execPath, [bin, ...args], env)).mib('VmRSS');
}

const rows = [];
const dir = await mkdtemp(join(tmpdir(), 'par-bench-tricks-'));
const env = {
  PATH: process.env.PATH,
  HOME: dir,
  PAR_IDENTITY_CLOUD_METADATA_URL: process.env.PAR_IDENTITY_CLOUD_METADATA_URL,
  DOCKER_DD_AGENT: '',
};
try {
  // 1. The timestamp.
  const iso = transformSync(readFileSync(join(ROOT, 'src/time/iso.ts'), 'utf8'), { loader: 'ts', format: 'esm' }).code.replace(
    /^export /gm,
    '',
  );
  const withIcu = medianPeak(process.execPath, ['-e', 'process.stdout.write(new Date().toISOString())'], env);
  const withoutIcu = medianPeak(process.execPath, ['-e', `${iso}\nprocess.stdout.write(isoString(Date.now()))`], env);
  rows.push([
    'ICU-free timestamp (isoString)',
    'toISOString',
    `${withIcu.rss.toFixed(1)} MiB`,
    `${withoutIcu.rss.toFixed(1)} MiB`,
    `${(withIcu.rss - withoutIcu.rss).toFixed(1)} MiB`,
  ]);

  // 2. The forced collection of an idle watch: the npm build, and a copy with the collection disabled
  //    (without --expose-gc, the collector is not found and the step does nothing, as its catch says).
  const kubeconfig = join(dir, 'kubeconfig');
  const { info, stop } = await startEmulator(['--kube', '--kubeconfig-out', kubeconfig]);
  try {
    // The lab's own cluster config (emulators/lab.ts): the settings of the cluster agent the emulator seeds, so issue 30's
    // comparison with that agent agrees.
    const cluster = info.lab.clusterConfig;
    const runEnv = { ...env, DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' };
    const made = spawnSync(process.execPath, [BIN, 'rotate-par-identity', '-c', cluster, '--kubeconfig', kubeconfig], {
      env: runEnv,
      encoding: 'utf8',
    });
    if (made.status !== 0) throw new Error(`could not create the identity Secret: ${made.stderr}`);
    /** A copy of the npm build (bin/, dist/) with one text of `file` replaced; its launcher. */
    const copyWith = (name, file, from, to) => {
      const copy = join(dir, name);
      mkdirSync(join(copy, 'bin'), { recursive: true });
      mkdirSync(join(copy, 'dist'));
      copyFileSync(BIN, join(copy, 'bin', 'par-identity.js'));
      writeFileSync(join(copy, 'package.json'), readFileSync(join(ROOT, 'package.json')));
      for (const f of readdirSync(join(ROOT, 'dist')).filter((n) => n.endsWith('.js')))
        copyFileSync(join(ROOT, 'dist', f), join(copy, 'dist', f));
      const text = readFileSync(join(copy, file), 'utf8');
      if (!text.includes(from)) throw new Error(`${file} no longer holds ${from}: update this bench`);
      writeFileSync(join(copy, file), text.replaceAll(from, to));
      return join(copy, 'bin', 'par-identity.js');
    };
    const noGc = copyWith('no-gc', join('dist', 'par-identity.js'), '"--expose-gc"', '"--no-expose-gc"');
    // The launcher's restart of watch without the optimising compilers (process.execve), disabled.
    const noRestart = copyWith('no-restart', join('bin', 'par-identity.js'), "typeof process.execve !== 'function'", 'true');
    const watchArgs = ['watch', '-c', cluster, '--kubeconfig', kubeconfig, '--json'];
    resetPageCache([process.execPath]);
    const withTricks = [];
    const withoutGc = [];
    const withoutRestart = [];
    for (let i = 0; i < 3; i++) {
      withTricks.push(await idleWatchRss(BIN, watchArgs, runEnv));
      withoutGc.push(await idleWatchRss(noGc, watchArgs, runEnv));
      withoutRestart.push(await idleWatchRss(noRestart, watchArgs, runEnv));
    }
    rows.push([
      'forced GC of an idle watch (npm build)',
      'no collection',
      `${median(withoutGc).toFixed(1)} MiB`,
      `${median(withTricks).toFixed(1)} MiB`,
      `${(median(withoutGc) - median(withTricks)).toFixed(1)} MiB`,
    ]);
    rows.push([
      'watch restarted without optimising compilers (npm build)',
      'not restarted',
      `${median(withoutRestart).toFixed(1)} MiB`,
      `${median(withTricks).toFixed(1)} MiB`,
      `${(median(withoutRestart) - median(withTricks)).toFixed(1)} MiB`,
    ]);
  } finally {
    await stop();
  }

  // 3. The code cache of the Kubernetes client asset, made and used by this Node as build-sea does.
  const asset = join(ROOT, 'dist', 'sea-client-node.cjs');
  if (!existsSync(asset)) {
    rows.push(['code cache of the client-node asset', 'no cache', '–', '–', 'run npm run build:sea first']);
  } else {
    const cache = join(dir, 'client-node.cache');
    const load = (useCache) => `const vm = require('node:vm'); const fs = require('node:fs');
const opts = { filename: 'par-identity:client-node.cjs' };
${useCache ? `opts.cachedData = fs.readFileSync(${JSON.stringify(cache)});` : ''}
const script = new vm.Script(fs.readFileSync(${JSON.stringify(asset)}, 'utf8'), opts);
if (opts.cachedData && script.cachedDataRejected) throw new Error('cache rejected');
const library = { exports: {} };
script.runInThisContext().call(library.exports, library.exports, require, library, 'client-node.cjs', '/');
${useCache ? '' : `if (process.argv[2] === 'make') fs.writeFileSync(${JSON.stringify(cache)}, script.createCachedData());`}`;
    const maker = join(dir, 'make.cjs');
    writeFileSync(maker, load(false));
    spawnSync(process.execPath, [maker, 'make'], { stdio: 'inherit' });
    const withCache = join(dir, 'with-cache.cjs');
    writeFileSync(withCache, load(true));
    const cached = medianPeak(process.execPath, [withCache], env);
    const parsed = medianPeak(process.execPath, [maker], env);
    rows.push([
      'code cache of the client-node asset (peak RSS)',
      'no cache',
      `${parsed.rss.toFixed(1)} MiB`,
      `${cached.rss.toFixed(1)} MiB`,
      `${(parsed.rss - cached.rss).toFixed(1)} MiB`,
    ]);
    rows.push([
      'code cache of the client-node asset (load time)',
      'no cache',
      `${parsed.ms.toFixed(0)} ms`,
      `${cached.ms.toFixed(0)} ms`,
      `${(parsed.ms - cached.ms).toFixed(0)} ms`,
    ]);
  }

  console.log(`\nnode ${process.version}; median of ${RUNS} runs (idle watch: of 3)`);
  const cells = [['trick', 'baseline', 'without it', 'with it', 'saved'], ...rows];
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  for (const r of cells) console.log(r.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
} finally {
  await rm(dir, { recursive: true, force: true });
}
