// Demo of hot reload (issue 6): the Kubernetes API emulator, N replicas of the demo runner signing a
// health check every 50 ms with whatever identity is current, and a rotation by the built
// `par-identity rotate-par-identity` in the middle. Every replica switches; no call fails.
//   DEMO_REPLICAS (5)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundleSources, until } from './dev-bundle.mjs';
import { BIN, startEmulator } from './start-emulator.mjs';

const REPLICAS = Number(process.env.DEMO_REPLICAS ?? 5);
const bold = (s) => (process.stdout.isTTY ? `\u001b[1m${s}\u001b[0m` : s);
const short = (fp) => fp.slice(0, 10);

const out = await bundleSources('demo-watch', { 'demo-runner': 'emulators/demo-runner/main.ts' });
const dir = await mkdtemp(join(tmpdir(), 'par-demo-watch-'));
const kubeconfig = join(dir, 'kubeconfig');
const { info, stop } = await startEmulator(['--kube', '--kubeconfig-out', kubeconfig]);
// Cloud metadata on a closed loopback port: the demo never reaches 169.254.169.254.
// DOCKER_DD_AGENT '': never the agent's container provider, so no docker daemon or kubelet of this machine is asked.
const env = {
  ...process.env,
  DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
  PAR_IDENTITY_CLOUD_METADATA_URL: 'http://127.0.0.1:1',
  DOCKER_DD_AGENT: '',
};
let replicas;
let failed = false;

function rotate() {
  const run = spawnSync(
    process.execPath,
    [BIN, 'rotate-par-identity', '-c', info.lab.clusterConfig, '--kubeconfig', kubeconfig, '--json'],
    {
      env,
      encoding: 'utf8',
    },
  );
  if (run.status !== 0) throw new Error(`rotate-par-identity failed (${run.status}): ${run.stderr}`);
  const result = JSON.parse(run.stdout);
  console.log(`  rotate-par-identity: ${result.action} Secret, new identity ${result.urn} (fingerprint ${short(result.fingerprint)}…)`);
  return result.fingerprint;
}

try {
  console.log(bold(`Kubernetes API emulator ${info.kubeUrl}, enrollment API emulator ${info.enrollmentUrl}`));
  const first = rotate();

  console.log(bold(`\nStarting ${REPLICAS} replicas (watchIdentity + a signed health check every 50 ms each)`));
  const child = spawn(
    process.execPath,
    [
      join(out, 'demo-runner.js'),
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      'datadog',
      '--enrollment-url',
      info.enrollmentUrl,
      '--replicas',
      String(REPLICAS),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  replicas = child;
  const events = [];
  createInterface({ input: child.stdout }).on('line', (line) => events.push(JSON.parse(line)));
  await until(() => events.some((e) => e.event === 'ready'), 15_000, 'the replicas to load the identity');
  await new Promise((resolve) => setTimeout(resolve, 1000));

  console.log(bold('\nRotating while they call'));
  const rotatedAt = Date.now();
  const second = rotate();
  await until(
    () => events.filter((e) => e.event === 'loaded' && e.fingerprint === second).length === REPLICAS,
    15_000,
    'every replica to reload',
  );
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const done = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  await done;
  const stats = events.find((e) => e.event === 'stats')?.replicas ?? [];

  console.log(
    `\n${'replica'.padEnd(8)} ${'calls'.padStart(6)} ${'failed'.padStart(7)}  ${`with ${short(first)}…`.padStart(16)} ${`with ${short(second)}…`.padStart(16)}  switched after`,
  );
  stats.forEach((s, i) => {
    const switched = events.find((e) => e.event === 'loaded' && e.replica === i && e.fingerprint === second);
    console.log(
      `${String(i).padEnd(8)} ${String(s.sent).padStart(6)} ${String(s.failed).padStart(7)}  ${String(s.okByFingerprint[first] ?? 0).padStart(16)} ${String(s.okByFingerprint[second] ?? 0).padStart(16)}  ${switched ? `${switched.at - rotatedAt} ms (rotation command included)` : 'never'}`,
    );
    if (s.failed > 0 || !s.okByFingerprint[second]) failed = true;
  });
  if (stats.length !== REPLICAS) failed = true;
  const total = stats.reduce((n, s) => n + s.sent, 0);
  const failures = stats.reduce((n, s) => n + s.failed, 0);
  console.log(`\n${failed ? 'demo FAILED' : `every replica switched to the new identity; ${total} signed calls, ${failures} failed.`}`);
} finally {
  replicas?.kill('SIGKILL');
  await stop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
