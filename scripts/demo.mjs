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
const { info, stop } = await startEmulator(['--kube', '--simulate', '3', '--kubeconfig-out', join(dir, 'kubeconfig')]);
// Cloud metadata on a closed loopback port: the demo never reaches 169.254.169.254.
// DOCKER_DD_AGENT '': never the agent's container provider, so no docker daemon or kubelet of this machine is asked.
const env = { ...process.env, DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', PAR_IDENTITY_CLOUD_METADATA_URL: 'http://127.0.0.1:1', DOCKER_DD_AGENT: '' };
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

// Two objects in one stream (kubectl reads concatenated JSON documents).
const DEMO_MANIFESTS = [
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'par-runner', namespace: 'datadog' },
      spec: {
        selector: { matchLabels: { app: 'par-runner' } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        template: {
          metadata: { labels: { app: 'par-runner' } },
          spec: {
            containers: [
              {
                name: 'runner',
                image: 'gcr.io/datadoghq/private-action-runner:demo',
                readinessProbe: { httpGet: { path: '/healthz', port: 9016 } },
                resources: { requests: { cpu: '500m', memory: '256Mi' } },
                envFrom: [{ secretRef: { name: 'private-action-runner-identity' } }],
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'batch-job', namespace: 'default' },
      spec: { nodeName: 'node-2', containers: [{ name: 'job', image: 'busybox', resources: { requests: { cpu: '1500m', memory: '1Gi' } } }] },
    },
  ]
  .map((o) => JSON.stringify(o))
  .join('\n');

function kubectlApply(manifest) {
  console.log(`\n${bold('$ kubectl create -f - (a DaemonSet par-runner, and a batch Pod filling node-2)')}`);
  const run = spawnSync('kubectl', ['--kubeconfig', info.kubeconfig, 'create', '-f', '-'], { input: manifest, encoding: 'utf8' });
  process.stdout.write(run.stdout + run.stderr);
  if (run.status !== 0) failed = true;
}

function kubectlJson(...args) {
  const run = spawnSync('kubectl', ['--kubeconfig', info.kubeconfig, ...args, '-o', 'json'], { encoding: 'utf8' });
  return run.status === 0 ? JSON.parse(run.stdout) : {};
}

async function waitFor(check, what) {
  for (let i = 0; i < 100; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`timed out waiting for ${what}`);
  failed = true;
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
  // The same settings as the cluster agent `emulator --kube` seeds (Helm layout, deployment/datadog-cluster-agent).
  await writeFile(
    join(dir, 'datadog-cluster.yaml'),
    [`api_key: ${API_KEY}`, `app_key: ${APP_KEY}`, `dd_url: ${info.enrollmentUrl}`, 'cluster_name: par-lab', 'kube_resources_namespace: datadog', 'private_action_runner:', '  enabled: true', ''].join('\n'),
  );
  par('rotate-par-identity', '-c', dir, '--kubeconfig', info.kubeconfig);
  // No local config: the settings the cluster agent runs with, read from its Deployment (where --agent exists).
  const agentFlag = spawnSync(process.execPath, [BIN, 'rotate-par-identity', '--help'], { env, encoding: 'utf8' }).stdout.includes('--agent ');
  if (agentFlag) par('rotate-par-identity', '--agent', 'deployment/datadog-cluster-agent', '-n', 'datadog', '--kubeconfig', info.kubeconfig);
  else par('rotate-par-identity', '-c', dir, '--kubeconfig', info.kubeconfig);
  // Key names and the URN only: the demo never prints key material, even base64-encoded.
  kubectl('-n', 'datadog', 'get', 'secret', 'private-action-runner-identity', '-o', 'go-template=resourceVersion {{.metadata.resourceVersion}}, keys:{{range $k, $v := .data}} {{$k}}{{end}}{{"\\n"}}urn {{index .data "urn" | base64decode}}{{"\\n"}}');
  par('status', '--secret', '-c', dir, '--kubeconfig', info.kubeconfig);

  console.log(bold('\nSafe rollout: a 3-node DaemonSet consuming the identity through envFrom; node-2 is too full for a second Pod'));
  kubectlApply(DEMO_MANIFESTS);
  await waitFor(() => kubectlJson('-n', 'datadog', 'get', 'daemonset', 'par-runner').status?.numberReady === 3, 'the DaemonSet to be Ready on 3 nodes');
  kubectl('get', 'pods', '-A', '-o', 'wide');
  par('rollout', 'daemonset/par-runner', '-n', 'datadog', '--kubeconfig', info.kubeconfig, '--check');
  par('rotate-par-identity', '-c', dir, '--kubeconfig', info.kubeconfig, '--rollout', 'daemonset/par-runner', '--fallback');
  kubectl('-n', 'datadog', 'get', 'pods', '-o', 'custom-columns=POD:.metadata.name,NODE:.spec.nodeName,IDENTITY:.metadata.annotations.par-identity\\.datadoghq\\.com/identity-fingerprint');
  kubectl('-n', 'datadog', 'get', 'daemonset', 'par-runner', '-o', 'jsonpath=strategy after the rollout: {.spec.updateStrategy.rollingUpdate}{"\\n"}');
  console.log(`\n${failed ? 'demo FAILED' : 'demo complete: file rotations, a verified status, a rollback, Secret rotations seen by kubectl, and a surge rollout with the capacity fallback on node-2.'}`);
} finally {
  await stop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
