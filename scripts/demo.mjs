// `npm run demo`: the main job end to end against the built-in emulators, using only the built bin.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startEmulator } from './start-emulator.mjs';

const API_KEY = '00000000000000000000000000emu0ak';
const APP_KEY = '0000000000000000000000000000000000emu0pk';
const bold = (s) => (process.stdout.isTTY ? `\u001b[1m${s}\u001b[0m` : s);

const dir = await mkdtemp(join(tmpdir(), 'par-demo-'));
const { info, stop } = await startEmulator(['--kube', '--kubeconfig-out', join(dir, 'kubeconfig')]);
const env = { ...process.env, DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' };
let failed = false;

function par(...args) {
  console.log(`\n${bold(`$ par-identity ${args.join(' ')}`)}`);
  const run = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
  process.stdout.write(run.stdout);
  process.stdout.write(run.stderr.split('\n').filter((l) => l.startsWith('warning') || l.startsWith('error') || l.startsWith('next')).map((l) => `${l}\n`).join(''));
  if (run.status !== 0) failed = true;
  return run;
}

function kubectl(...args) {
  console.log(`\n${bold(`$ kubectl ${args.join(' ')}`)}`);
  const run = spawnSync('kubectl', ['--kubeconfig', info.kubeconfig, ...args], { encoding: 'utf8' });
  if (run.error) {
    console.log(`  (kubectl not available: ${run.error.message})`);
    return;
  }
  process.stdout.write(run.stdout);
  process.stdout.write(run.stderr);
  if (run.status !== 0) failed = true;
}

async function showFile() {
  const text = await readFile(join(dir, 'privateactionrunner_private_identity.json'), 'utf8');
  const record = JSON.parse(text);
  console.log(`  file now holds urn ${record.urn} (private_key: ${record.private_key.length} chars, not shown)`);
}

try {
  console.log(bold(`Enrollment API emulator: ${info.enrollmentUrl}`));
  await writeFile(
    join(dir, 'datadog.yaml'),
    [`api_key: ${API_KEY}`, `app_key: ${APP_KEY}`, `dd_url: ${info.enrollmentUrl}`, 'hostname: demo-host', 'private_action_runner:', '  enabled: true', ''].join('\n'),
  );
  console.log(`Agent config written to ${join(dir, 'datadog.yaml')} (test keys; DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true points the API at the emulator)`);
  par('rotate-identity', '-c', dir);
  await showFile();
  par('rotate-identity', '-c', dir);
  await showFile();
  par('status', '-c', dir, '--verify');
  par('rollback', '-c', dir);
  await showFile();

  console.log(bold(`\nCluster agent: the shared identity Secret on the Kubernetes API emulator (${info.kubeUrl})`));
  await writeFile(
    join(dir, 'datadog-cluster.yaml'),
    [`api_key: ${API_KEY}`, `app_key: ${APP_KEY}`, `dd_url: ${info.enrollmentUrl}`, 'cluster_name: demo-cluster', 'kube_resources_namespace: datadog', 'private_action_runner:', '  enabled: true', ''].join('\n'),
  );
  par('rotate-par-identity', '-c', dir, '--kubeconfig', info.kubeconfig);
  par('rotate-par-identity', '-c', dir, '--kubeconfig', info.kubeconfig);
  // Key names and the URN only: the demo never prints key material, even base64-encoded.
  kubectl('-n', 'datadog', 'get', 'secret', 'private-action-runner-identity', '-o', 'go-template=resourceVersion {{.metadata.resourceVersion}}, keys:{{range $k, $v := .data}} {{$k}}{{end}}{{"\\n"}}urn {{index .data "urn" | base64decode}}{{"\\n"}}');
  par('status', '--secret', '-c', dir, '--kubeconfig', info.kubeconfig);
  console.log(`\n${failed ? 'demo FAILED' : 'demo complete: two file rotations, a verified status, a rollback, and two Secret rotations seen by kubectl.'}`);
} finally {
  await stop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
