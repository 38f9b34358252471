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
// Cloud metadata on a closed loopback port: the demo never reaches 169.254.169.254.
// DOCKER_DD_AGENT '': never the agent's container provider, so no docker daemon or kubelet of this machine is asked.
const env = {
  ...process.env,
  DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
  PAR_IDENTITY_CLOUD_METADATA_URL: 'http://127.0.0.1:1',
  DOCKER_DD_AGENT: '',
};
let failed = false;

function par(...args) {
  console.log(`\n${bold(`$ par-identity ${args.join(' ')}`)}`);
  const run = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
  process.stdout.write(run.stdout);
  process.stdout.write(
    run.stderr
      .split('\n')
      .filter((l) => l.startsWith('warning') || l.startsWith('error') || l.startsWith('next'))
      .map((l) => `${l}\n`)
      .join(''),
  );
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
    [
      `api_key: ${API_KEY}`,
      `app_key: ${APP_KEY}`,
      `dd_url: ${info.enrollmentUrl}`,
      'hostname: demo-host',
      'private_action_runner:',
      '  enabled: true',
      '',
    ].join('\n'),
  );
  console.log(
    `Agent config written to ${join(dir, 'datadog.yaml')} (test keys; DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true points the API at the emulator)`,
  );
  par('rotate-identity', '-c', dir);
  await showFile();
  par('rotate-identity', '-c', dir);
  await showFile();
  par('status', '-c', dir, '--verify');
  par('rollback', '-c', dir);
  await showFile();

  console.log(bold(`\nCluster agent: the shared identity Secret on the Kubernetes API emulator (${info.kubeUrl})`));
  // The lab's own cluster config (emulators/lab.ts): the settings of the cluster agent `emulator --kube`
  // seeds (Helm layout, deployment/datadog-cluster-agent), so the running agent and the config agree.
  const clusterConfig = info.lab.clusterConfig;
  par('rotate-par-identity', '-c', clusterConfig, '--kubeconfig', info.kubeconfig);
  // No local config: the settings the cluster agent runs with, read from its Deployment (where --agent exists).
  const agentFlag = spawnSync(process.execPath, [BIN, 'rotate-par-identity', '--help'], { env, encoding: 'utf8' }).stdout.includes(
    '--agent ',
  );
  if (agentFlag)
    par('rotate-par-identity', '--agent', 'deployment/datadog-cluster-agent', '-n', 'datadog', '--kubeconfig', info.kubeconfig);
  else par('rotate-par-identity', '-c', clusterConfig, '--kubeconfig', info.kubeconfig);
  // Key names and the URN only: the demo never prints key material, even base64-encoded.
  kubectl(
    '-n',
    'datadog',
    'get',
    'secret',
    'private-action-runner-identity',
    '-o',
    'go-template=resourceVersion {{.metadata.resourceVersion}}, keys:{{range $k, $v := .data}} {{$k}}{{end}}{{"\\n"}}urn {{index .data "urn" | base64decode}}{{"\\n"}}',
  );
  par('status', '--secret', '-c', clusterConfig, '--kubeconfig', info.kubeconfig);

  // The emulator is a fake of the API, not a cluster: it stores the restart patch, runs no controller.
  // What the tool would patch, judged by the API server (server-side dry run); the surge rollout itself
  // on a real control plane: npm run demo:cluster.
  console.log(bold('\nRollout plan of the cluster agent (the emulator runs no controllers: a real surge is `npm run demo:cluster`)'));
  par('rollout', 'deployment/datadog-cluster-agent', '-n', 'datadog', '--kubeconfig', info.kubeconfig, '--dry-run');
  console.log(
    `\n${failed ? 'demo FAILED' : 'demo complete: file rotations, a verified status, a rollback, Secret rotations seen by kubectl, and the rollout plan of the cluster agent (the surge itself: npm run demo:cluster).'}`,
  );
} finally {
  await stop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
