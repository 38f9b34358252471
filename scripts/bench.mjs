// `npm run bench`: every figure of issue 15, each beside its baseline measured in the same run, on the
// newest supported Node (the one running this script): wall time of whole commands (median and p90 of
// BENCH_RUNS, after 2 warm-ups), peak and idle RSS, and the global install size.
// Nothing here may reach a non-loopback address: every process gets PAR_IDENTITY_CLOUD_METADATA_URL
// pointing at a closed loopback port, and the Datadog and Kubernetes APIs are the local emulators.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SEA_NODE_VERSION, seaNodeBinary } from './bundle-options.mjs';
import { measureInstallSize } from './install-size.mjs';
import { BIN, startEmulator } from './start-emulator.mjs';
import { idleWatch } from './bench/idle-watch.mjs';
import { resetPageCache } from './bench/page-cache.mjs';

process.env.PAR_IDENTITY_CLOUD_METADATA_URL = 'http://127.0.0.1:9';
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const API_KEY = '00000000000000000000000000emu0ak';
const APP_KEY = '0000000000000000000000000000000000emu0pk';
const NAMESPACE = 'datadog';
const SECRET = 'private-action-runner-identity';
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const runbook = here('./bench/manual-runbook.sh');
const k8sRunbook = here('./bench/manual-k8s-runbook.sh');
const SEA = here('../dist/sea/par-identity-linux-x64');
const bareNode26 = seaNodeBinary('x64').bin;
const npmCli = (args) => [process.execPath, [BIN, ...args]];
const seaCli = (args) => [SEA, args];

if (Number(process.versions.node.split('.')[0]) < 26)
  console.warn(`warning: the bench should run on the newest supported Node (26); this is ${process.version}`);
for (const needed of [SEA, bareNode26])
  if (!existsSync(needed)) throw new Error(`${needed} is missing: run npm run build:sea first (npm run bench does)`);

function time([cmd, args], env) {
  const samples = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const start = process.hrtime.bigint();
    const run = spawnSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (run.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
    if (i >= 2) samples.push(ms); // two warm-up runs fill the page cache
  }
  samples.sort((a, b) => a - b);
  const pick = (q) => samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)];
  return { median: pick(0.5), p90: pick(0.9) };
}

/**
 * `command` and its `baseline` in turn (A B A B …, after 2 warm-ups of each), so that a drift of the
 * machine's speed hits both alike: each one's median and p90, and the median of the ratios pair by pair.
 */
function timeVs(command, baseline, env) {
  const a = [];
  const b = [];
  const once = ([cmd, args]) => {
    const start = process.hrtime.bigint();
    const run = spawnSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    if (run.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  for (let i = 0; i < RUNS + 2; i++) {
    const [ta, tb] = [once(command), once(baseline)];
    if (i >= 2) {
      a.push(ta);
      b.push(tb);
    }
  }
  const summary = (samples) => {
    const sorted = [...samples].sort((x, y) => x - y);
    const pick = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    return { median: pick(0.5), p90: pick(0.9) };
  };
  return { command: summary(a), baseline: summary(b), ratio: summary(a.map((t, i) => t / b[i])).median };
}

/** Peak RSS (MiB) of one run: getrusage(RUSAGE_CHILDREN) through python3, median of 5 runs. */
function peakRss([cmd, args], env) {
  const script =
    'import resource,subprocess,sys\nr=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)\nprint(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)';
  const peaks = [];
  for (let i = 0; i < 5; i++) {
    const out = spawnSync('python3', ['-c', script, cmd, ...args], { env, encoding: 'utf8' })
      .stdout.trim()
      .split(' ');
    if (out[0] !== '0') throw new Error(`${cmd} ${args.join(' ')} failed (${out[0]})`);
    peaks.push(Number(out[1]) / 1024);
  }
  return peaks.sort((a, b) => a - b)[2];
}

/** RSS (MiB) of one idle `watch`, 2 s after it loaded the identity, with its anonymous and file-backed parts. */
async function idleWatchRss([cmd, args], env) {
  const { mib } = await idleWatch(cmd, args, env);
  return { rss: mib('VmRSS'), anon: mib('RssAnon'), file: mib('RssFile') };
}

/** The median of `runs` idle-watch measurements. */
async function medianIdleWatchRss(command, env, runs = 3) {
  const all = [];
  for (let i = 0; i < runs; i++) all.push(await idleWatchRss(command, env));
  return all.sort((a, b) => a.rss - b.rss)[Math.floor(runs / 2)];
}

/** The baseline must produce an identity the product accepts, or the comparison is not honest. */
function assertDecodes(label, args, env) {
  const run = spawnSync(process.execPath, [BIN, 'status', ...args, '--json'], { env, encoding: 'utf8' });
  const result = run.stdout ? JSON.parse(run.stdout) : {};
  const urn = result.urn ?? result.current?.urn;
  if (run.status !== 0 || !urn)
    throw new Error(`${label}: its identity does not decode (${result.code ?? run.status}: ${result.message ?? run.stderr})`);
}

const dir = await mkdtemp(join(tmpdir(), 'par-bench-'));
const kubeconfig = join(dir, 'kubeconfig');
const { info, stop } = await startEmulator(['--kube', '--kubeconfig-out', kubeconfig]);
const rows = [];
try {
  const local = join(dir, 'local');
  // The lab's own cluster config (emulators/lab.ts): the settings of the cluster agent the emulator seeds, so issue 30's
  // comparison with that agent agrees.
  const cluster = info.lab.clusterConfig;
  spawnSync('mkdir', ['-p', local]);
  const creds = [`api_key: ${API_KEY}`, `app_key: ${APP_KEY}`, `dd_url: ${info.enrollmentUrl}`];
  await writeFile(join(local, 'datadog.yaml'), [...creds, 'private_action_runner:', '  enabled: true', ''].join('\n'));
  // Nothing from the caller's environment that could point elsewhere (proxies, DD_*, KUBECONFIG).
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    PAR_IDENTITY_CLOUD_METADATA_URL: process.env.PAR_IDENTITY_CLOUD_METADATA_URL,
    // Not the agent's container: no docker daemon or kubelet of this machine is asked for the hostname.
    DOCKER_DD_AGENT: '',
    DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
    DD_API_KEY: API_KEY,
    DD_APP_KEY: APP_KEY,
  };
  const rotateLocal = ['rotate-identity', '-c', local];
  const rotateCluster = ['rotate-par-identity', '-c', cluster, '--kubeconfig', kubeconfig];

  // Baselines first checked for validity.
  const manualFile = join(dir, 'manual.json');
  spawnSync('bash', [runbook, info.enrollmentUrl, manualFile], { env, stdio: 'inherit' });
  assertDecodes('manual runbook', ['-c', local, '--identity-file', manualFile], env);
  spawnSync(process.execPath, [BIN, ...rotateCluster], { env, stdio: 'ignore' }); // creates the Secret the baseline replaces
  const k8sBaseline = ['bash', [k8sRunbook, info.enrollmentUrl, kubeconfig, NAMESPACE, SECRET]];
  if (spawnSync(...k8sBaseline, { env, stdio: 'inherit' }).status !== 0) throw new Error('manual Kubernetes runbook failed');
  assertDecodes('manual runbook + kubectl replace', ['--secret', '-c', cluster, '--kubeconfig', kubeconfig], env);

  const manual = time(['bash', [runbook, info.enrollmentUrl, manualFile]], env);
  const manualK8s = time(k8sBaseline, env);
  // Issue 25: --help at most 1.3× a bare `node -e 0`, measured pair by pair in this run (the launcher
  // prints the stored help text, dist/help.js); a command's help, and the full path it replaces, beside it.
  const nodeE0Cmd = [process.execPath, ['-e', '0']];
  const help = timeVs(npmCli(['--help']), nodeE0Cmd, env);
  const commandHelp = timeVs(npmCli(['rotate-identity', '--help']), nodeE0Cmd, env);
  const fullHelp = timeVs(npmCli(['--help']), nodeE0Cmd, { ...env, PAR_IDENTITY_NO_FAST_HELP: '1' });
  // The single executable's --help answers from the stored texts too (src/cli/fast-help.ts), at most
  // today's 1.33x its own bare Node (issue 25); its full path beside it is the figure before that.
  resetPageCache([process.execPath, SEA, bareNode26]);
  const seaHelp = timeVs(seaCli(['--help']), [bareNode26, ['-e', '0']], env);
  const seaFullHelp = timeVs(seaCli(['--help']), [bareNode26, ['-e', '0']], { ...env, PAR_IDENTITY_NO_FAST_HELP: '1' });
  rows.push(['--help, npm build', `node -e 0 (${process.version})`, help.baseline, help.command, undefined, 1.3, help.ratio]);
  rows.push([
    'rotate-identity --help, npm build',
    `node -e 0 (${process.version})`,
    commandHelp.baseline,
    commandHelp.command,
    undefined,
    1.3,
    commandHelp.ratio,
  ]);
  rows.push([
    '--help, npm build, full path (PAR_IDENTITY_NO_FAST_HELP=1)',
    `node -e 0 (${process.version})`,
    fullHelp.baseline,
    fullHelp.command,
    undefined,
    undefined,
    fullHelp.ratio,
  ]);
  rows.push([
    '--help, single executable',
    `node ${SEA_NODE_VERSION} -e 0`,
    seaHelp.baseline,
    undefined,
    seaHelp.command,
    1.33,
    seaHelp.ratio,
  ]);
  rows.push([
    '--help, single executable, full path (PAR_IDENTITY_NO_FAST_HELP=1)',
    `node ${SEA_NODE_VERSION} -e 0`,
    seaFullHelp.baseline,
    undefined,
    seaFullHelp.command,
    undefined,
    seaFullHelp.ratio,
  ]);
  rows.push([
    'rotate-identity (enroll + write + verify)',
    'manual runbook',
    manual,
    time(npmCli(rotateLocal), env),
    time(seaCli(rotateLocal), env),
    1.0,
  ]);
  rows.push([
    'rotate-identity --no-verify',
    'manual runbook',
    manual,
    time(npmCli([...rotateLocal, '--no-verify']), env),
    time(seaCli([...rotateLocal, '--no-verify']), env),
    1.0,
  ]);
  rows.push([
    'rotate-par-identity',
    'runbook + kubectl replace',
    manualK8s,
    time(npmCli(rotateCluster), env),
    time(seaCli(rotateCluster), env),
    1.2,
  ]);

  // Config loading is linear (issue 13): `status` on a 50 000-key datadog.yaml beside the same config as is.
  const big = join(dir, 'big');
  spawnSync('mkdir', ['-p', big]);
  const extraKeys = Array.from({ length: 50_000 }, (_, i) => `bench_key_${i}: value-${i}`).join('\n');
  await writeFile(join(big, 'datadog.yaml'), `${await readFile(join(local, 'datadog.yaml'), 'utf8')}\n${extraKeys}\n`);
  const statusSmall = time(npmCli(['status', '-c', local, '--identity-file', manualFile]), env);
  const statusBig = time(npmCli(['status', '-c', big, '--identity-file', manualFile]), env);

  const watchArgs = ['watch', '-c', cluster, '--kubeconfig', kubeconfig, '--json'];
  resetPageCache([process.execPath, SEA]);
  const idle = {
    bare: await medianIdleWatchRss(
      [process.execPath, ['-e', 'setInterval(() => {}, 1000); console.log(JSON.stringify({ event: "loaded" }))']],
      env,
    ),
    npm: await medianIdleWatchRss(npmCli(watchArgs), env),
    sea: await medianIdleWatchRss(seaCli(watchArgs), env),
  };
  const memory = [
    ['idle watch RSS', 'bare node -e (idle)', idle.bare.rss, idle.npm.rss, idle.sea.rss, 60],
    [
      'peak RSS of rotate-identity',
      'node -e 0',
      peakRss([process.execPath, ['-e', '0']], env),
      peakRss(npmCli(rotateLocal), env),
      peakRss(seaCli(rotateLocal), env),
      60,
    ],
  ];
  const { installedBytes, tarballBytes } = measureInstallSize();

  console.log(
    `\nnode ${process.version} (npm build), single executable from node ${SEA_NODE_VERSION}; ${RUNS} runs each after 2 warm-ups; wall time median (p90) in ms`,
  );
  const cells = [['figure', 'baseline', 'baseline', 'npm build', '× base', 'single exe', '× base', 'goal']];
  const fmt = (t) => (t ? `${t.median.toFixed(1)} (${t.p90.toFixed(1)})` : '–');
  const ratio = (t, base) => (t ? `${(t.median / base.median).toFixed(2)}×` : '–');
  // A row measured pair by pair (timeVs) carries its own ratio: the median of the pairs' ratios.
  const ratioOf = (t, base, paired) => (t && paired !== undefined ? `${paired.toFixed(2)}×` : ratio(t, base));
  for (const [name, baseName, base, npm, sea, goal, paired] of rows) {
    cells.push([
      name,
      baseName,
      fmt(base),
      fmt(npm),
      ratioOf(npm, base, paired),
      fmt(sea),
      ratioOf(sea, base, paired),
      goal === undefined ? '–' : `≤ ${goal.toFixed(Number.isInteger(goal * 10) ? 1 : 2)}×`,
    ]);
  }
  for (const [name, baseName, base, npm, sea, goal] of memory)
    cells.push([name, baseName, `${base.toFixed(1)} MiB`, `${npm.toFixed(1)} MiB`, '', `${sea.toFixed(1)} MiB`, '', `≤ ${goal} MiB`]);
  cells.push([
    'global npm install',
    'before this change',
    '104 MB',
    `${(installedBytes / 1e6).toFixed(1)} MB`,
    `tgz ${(tarballBytes / 1e6).toFixed(2)} MB`,
    '–',
    '',
    '≤ 15 MB',
  ]);
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  for (const r of cells) console.log(r.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
  const parts = (m) => `${m.rss.toFixed(1)} MiB = ${m.anon.toFixed(1)} anonymous + ${m.file.toFixed(1)} file-backed`;
  console.log(
    `\nidle watch RSS by kind (file-backed: the pages of the executable and libraries it touched): bare node ${parts(idle.bare)}; npm build ${parts(idle.npm)}; single executable ${parts(idle.sea)}`,
  );
  console.log(
    `\nconfig loading: status with a 50 000-key datadog.yaml ${statusBig.median.toFixed(1)} ms (p90 ${statusBig.p90.toFixed(1)}) beside the plain config ${statusSmall.median.toFixed(1)} ms: ${(statusBig.median - statusSmall.median).toFixed(1)} ms for 50 000 keys (goal: well under 1 s)`,
  );
} finally {
  await stop();
  await rm(dir, { recursive: true, force: true });
}
