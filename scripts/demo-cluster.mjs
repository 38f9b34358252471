// `npm run demo:cluster`: the surge rollout with its capacity fallback, on a real control plane (etcd,
// kube-apiserver, controller-manager, scheduler, kwok: scripts/control-plane.sh, docs/control-plane.md).
// The Kubernetes emulator of `npm run demo` runs no controllers, so a rollout only shows here.
// Its own control plane in .tmp/demo-control-plane (never the tests'), stopped at the end unless one
// already ran there. PAR_CONTROL_PLANE_BIN: prebuilt binaries (else built from Go modules first).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { bundleSources, ROOT } from './dev-bundle.mjs';
import { BIN } from './start-emulator.mjs';

const CP = join(ROOT, 'scripts', 'control-plane.sh');
const CP_DIR = join(ROOT, '.tmp', 'demo-control-plane');
const NS = 'datadog';
const bold = (s) => (process.stdout.isTTY ? `\u001b[1m${s}\u001b[0m` : s);
const cpEnv = { ...process.env, PAR_CONTROL_PLANE_DIR: CP_DIR };
let failed = false;

function controlPlane(...args) {
  const run = spawnSync('bash', [CP, ...args], { env: cpEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) throw new Error(`control-plane.sh ${args.join(' ')} exited ${run.status}`);
  return run.stdout;
}

const alreadyRunning =
  existsSync(join(CP_DIR, 'admin.kubeconfig')) &&
  spawnSync('bash', [CP, 'kubeconfig'], { env: cpEnv }).status === 0 &&
  spawnSync('kubectl', ['--kubeconfig', join(CP_DIR, 'admin.kubeconfig'), 'get', '--raw', '/readyz'], { encoding: 'utf8' }).status === 0;
if (!alreadyRunning) {
  console.log(bold('Starting a real control plane (scripts/control-plane.sh start; the first build takes minutes)'));
  controlPlane('start');
}
// PATH (the control plane's own kubectl first) and KUBECONFIG, as `control-plane.sh env` prints them.
const env = { ...process.env, DOCKER_DD_AGENT: '', PAR_IDENTITY_CLOUD_METADATA_URL: 'http://127.0.0.1:1' };
for (const [, name, value] of controlPlane('env').matchAll(/^export (\w+)=(.*)$/gm))
  env[name] = value.replace('$PATH', process.env.PATH ?? '');

function show(cmd, args, input) {
  console.log(
    `\n${bold(`$ ${cmd === process.execPath ? 'par-identity' : cmd} ${(cmd === process.execPath ? args.slice(1) : args).join(' ')}`)}`,
  );
  const run = spawnSync(cmd, args, { env, input, encoding: 'utf8' });
  process.stdout.write(run.stdout + run.stderr);
  if (run.status !== 0) failed = true;
  return run;
}
const kubectl = (...args) => show('kubectl', args);
const par = (...args) => show(process.execPath, [BIN, ...args]);
const json = (...args) => JSON.parse(spawnSync('kubectl', [...args, '-o', 'json'], { env, encoding: 'utf8' }).stdout || '{}');

async function waitFor(check, what) {
  for (let i = 0; i < 300; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`timed out waiting for ${what}`);
  failed = true;
}

try {
  // A real identity in the Secret: the rollout stamps its fingerprint on the Pod template.
  const lib = await bundleSources('demo-cluster', { identity: 'src/identity/index.ts' });
  const { buildUrn, encodePrivateJwk, generateIdentityKey } = await import(join(lib, 'identity.js'));
  const key = generateIdentityKey();
  const b64 = (s) => Buffer.from(s, 'utf8').toString('base64');
  const pool = `demo-${Date.now().toString(36)}`;
  console.log(
    bold(`\nThree kwok Nodes of 2 CPU (pool ${pool}); a DaemonSet consuming the identity Secret; one node too full for a second Pod`),
  );
  controlPlane('add-nodes', pool, '3', '2', '4Gi', '110');
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'private-action-runner-identity', namespace: NS },
      type: 'Opaque',
      data: {
        private_key: b64(encodePrivateJwk(key)),
        urn: b64(buildUrn({ region: 'us1', orgId: 1234567, runnerId: crypto.randomUUID() })),
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'par-runner', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'par-runner' } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        template: {
          metadata: { labels: { app: 'par-runner' } },
          spec: {
            nodeSelector: { 'par-test-pool': pool },
            terminationGracePeriodSeconds: 0,
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
    // A batch Pod that leaves node 1 of the pool no room for a surge Pod.
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'batch-job', namespace: 'default' },
      spec: {
        nodeName: `${pool}-1`,
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'job', image: 'busybox', resources: { requests: { cpu: '1500m', memory: '1Gi' } } }],
      },
    },
  ];
  show('kubectl', ['apply', '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n'));
  await waitFor(() => json('-n', NS, 'get', 'daemonset', 'par-runner').status?.numberReady === 3, 'the DaemonSet to be Ready on 3 nodes');
  kubectl('-n', NS, 'get', 'pods', '-o', 'wide');
  par('rollout', 'daemonset/par-runner', '-n', NS, '--check');
  par('rollout', 'daemonset/par-runner', '-n', NS, '--fallback');
  kubectl(
    '-n',
    NS,
    'get',
    'pods',
    '-o',
    'custom-columns=POD:.metadata.name,NODE:.spec.nodeName,IDENTITY:.metadata.annotations.par-identity\\.datadoghq\\.com/identity-fingerprint',
  );
  kubectl(
    '-n',
    NS,
    'get',
    'daemonset',
    'par-runner',
    '-o',
    'jsonpath=strategy after the rollout: {.spec.updateStrategy.rollingUpdate}{"\\n"}',
  );
  kubectl('-n', NS, 'events', '--for', 'daemonset/par-runner');
  console.log(
    `\n${failed ? 'demo:cluster FAILED' : `demo:cluster complete: a surge rollout (create-before-delete) on a real control plane, with the capacity fallback on ${pool}-1.`}`,
  );
} finally {
  if (!alreadyRunning) controlPlane('stop');
}
process.exitCode = failed ? 1 : 0;
