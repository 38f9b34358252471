// `npm run bench:cluster`: par-identity against a real control plane of its own (scripts/control-plane.sh:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, and kwok for Nodes without kubelets),
// every figure beside its baseline measured in the same run and on the same cluster.
//   1. A DaemonSet on --nodes kwok Nodes restarted twice, alternately: the native `kubectl rollout restart`
//      (maxUnavailable 1, delete-before-create) and `par-identity rollout --surge` (create-before-delete):
//      wall time, and node-seconds without a Ready Pod as a watch on the Pods sees them.
//   2. --watchers `par-identity watch` processes on one identity Secret (a ServiceAccount whose Role names
//      that Secret alone, a TokenRequest token): Secret update → each watcher's `written` event over
//      --changes updates, CPU meanwhile; then the requests they send over --idle-seconds without changes
//      (apiserver_request_total, server side) and the RSS of an idle watcher.
// Output: a markdown table on stdout and .tmp/bench-cluster.json. Everything stays on 127.0.0.1.
//
//   node scripts/bench-cluster.mjs [--nodes 100] [--watchers 100] [--changes 5] [--idle-seconds 300]
//                                  [--rounds 1] [--skip-daemonset] [--skip-watch]
// PAR_CONTROL_PLANE_POD_READY_MS (default 2000) is passed on: how long a bound Pod takes to become Ready.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { bundleSources, ROOT } from './dev-bundle.mjs';

const { values: flags } = parseArgs({
  options: {
    nodes: { type: 'string', default: '100' },
    watchers: { type: 'string', default: '100' },
    changes: { type: 'string', default: '5' },
    'idle-seconds': { type: 'string', default: '300' },
    rounds: { type: 'string', default: '1' },
    'skip-daemonset': { type: 'boolean', default: false },
    'skip-watch': { type: 'boolean', default: false },
  },
  strict: true,
});
const positive = (name, min = 1) => {
  const n = Number(flags[name]);
  if (!Number.isInteger(n) || n < min || n > 10_000)
    throw new Error(`--${name} must be an integer from ${min} to 10000, got ${flags[name]}`);
  return n;
};
const NODES = positive('nodes');
const WATCHERS = positive('watchers');
const CHANGES = positive('changes');
const IDLE_SECONDS = positive('idle-seconds', 0);
const ROUNDS = positive('rounds');

const CP_SCRIPT = join(ROOT, 'scripts', 'control-plane.sh');
const CP_BIN = join(ROOT, 'test', 'control-plane', 'bin');
// A control plane of the bench's own: never the one the tests use (.tmp/control-plane).
const CP_DIR = join(ROOT, '.tmp', 'bench-control-plane');
const ADMIN = join(CP_DIR, 'admin.kubeconfig');
const BIN = join(ROOT, 'bin', 'par-identity.js');
const SUMMARY = join(ROOT, '.tmp', 'bench-cluster.json');
const SECRET = 'private-action-runner-identity';
const DS_NS = 'bench-ds';
const DS_NAME = 'runner';
const POOL = { key: 'par-bench-pool', value: 'bench' };
const WATCH_NS = 'bench-watch';
const WATCHER_SA = 'par-watcher';
const COMPONENTS = ['etcd', 'apiserver', 'controller-manager', 'scheduler', 'kwok'];

// Nothing may leave loopback: no proxy for this process's client, a clean environment for the children.
for (const v of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) delete process.env[v];
process.env.NO_PROXY = '127.0.0.1,localhost';
const scratch = await mkdtemp(join(tmpdir(), 'par-bench-cluster-'));
const env = {
  PATH: `${CP_BIN}:${process.env.PATH}`,
  HOME: scratch,
  NO_COLOR: '1',
  NO_PROXY: '127.0.0.1,localhost',
  PAR_CONTROL_PLANE_DIR: CP_DIR,
  PAR_IDENTITY_CLOUD_METADATA_URL: 'http://127.0.0.1:9', // never the real metadata address
  DOCKER_DD_AGENT: '', // never the container provider: no docker daemon or kubelet of this machine
  ...(process.env.PAR_CONTROL_PLANE_POD_READY_MS ? { PAR_CONTROL_PLANE_POD_READY_MS: process.env.PAR_CONTROL_PLANE_POD_READY_MS } : {}),
};

// ---------------------------------------------------------------------------------------------- helpers

const children = new Set();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (msg) => console.error(`bench-cluster: ${msg}`);
const mib = (kb) => kb / 1024;
const pick = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

/** Runs a command to its end, collecting its output; never throws for a non-zero exit. */
/** `group`: the child leads a process group of its own, and a stop ends the whole group (a build's compilers too). */
function run(cmd, args, { stdin, timeoutMs = 120_000, group = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'], detached: group });
    child.group = group;
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => kill(child), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin ?? '');
  });
}

/** SIGKILL to a child (and its group when it has one), once and by its pid only. */
function kill(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(child.group ? -child.pid : child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

const kubectl = (args, opts) => run('kubectl', [`--kubeconfig=${ADMIN}`, ...args], opts);
async function kubectlOk(args, opts) {
  const r = await kubectl(args, opts);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}
const create = (...objects) =>
  kubectlOk(['create', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) });
const getJson = async (args) => JSON.parse(await kubectlOk(['get', ...args, '-o', 'json']));

/** An error `eventually` does not retry: the thing waited for cannot happen any more. */
class Fatal extends Error {}

/** Polls `check` (every `everyMs`) until it returns a truthy value; throws after `timeoutMs` or on a Fatal. */
async function eventually(check, what, timeoutMs, everyMs = 250) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      if (err instanceof Fatal) throw err;
      last = err;
    }
    if (Date.now() > end)
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await sleep(everyMs);
  }
}

const pidOf = (component) => {
  try {
    return Number(readFileSync(join(CP_DIR, `${component}.pid`), 'utf8').trim());
  } catch {
    return undefined;
  }
};
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** VmRSS in KiB, from /proc/<pid>/status. */
const rssKb = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
};
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** utime + stime of one process, in seconds (/proc/<pid>/stat fields 14 and 15). */
const cpuSeconds = (pid) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
};
/** The machine's CPU time (all cores): busy and total, in ticks, from the first line of /proc/stat. */
const machineCpu = () => {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - ticks[3] - ticks[4], total };
};
const loadavg1 = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

// ---------------------------------------------------------------------------------------- control plane

let controlPlaneStarted = false;
let cleanedUp = false;
/** Stops every child and the control plane this run started; synchronous, so a signal handler can call it. */
function cleanupSync() {
  if (cleanedUp) return;
  cleanedUp = true;
  for (const child of children) kill(child);
  if (controlPlaneStarted) {
    log('stopping the control plane');
    spawnSync('bash', [CP_SCRIPT, 'stop'], { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 60_000 });
  }
  spawnSync('rm', ['-rf', scratch]);
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`);
    cleanupSync();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

async function startControlPlane() {
  const running = COMPONENTS.filter((c) => {
    const pid = pidOf(c);
    return pid && alive(pid);
  });
  if (running.length)
    throw new Error(
      `a control plane already runs in ${CP_DIR} (${running.join(', ')}): stop it first with PAR_CONTROL_PLANE_DIR=${CP_DIR} ${CP_SCRIPT} stop`,
    );
  controlPlaneStarted = true; // from here on, stop it whatever happens (stop is by pid file, idempotent)
  const t0 = performance.now();
  // Builds first when the pinned versions changed (scripts/control-plane/build.sh): minutes, then.
  const r = await run('bash', [CP_SCRIPT, 'start'], { timeoutMs: 1_800_000, group: true });
  const wallMs = performance.now() - t0;
  if (r.code !== 0) throw new Error(`control-plane.sh start exited ${r.code}:\n${r.stderr}`);
  if (/building/.test(r.stderr)) log('control-plane.sh start built the binaries first (the pinned versions changed)');
  const readyMs = Number(/ready in (\d+) ms/.exec(r.stderr)?.[1] ?? Number.NaN);
  return { readyMs, wallMs };
}

/** The control plane's own processes: RSS (MiB) each, from their pid files. */
const controlPlaneRss = () => Object.fromEntries(COMPONENTS.map((c) => [c, mib(rssKb(pidOf(c)))]));

/** Counters and gauges of the apiserver's /metrics whose name is `name` and whose labels include `match`. */
async function apiserverMetric(name, match) {
  const text = await kubectlOk(['get', '--raw', '/metrics'], { timeoutMs: 60_000 });
  const series = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    const labels = Object.fromEntries([...line.slice(name.length + 1, close).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) series.push({ labels, value: Number(line.slice(close + 1).trim()) });
  }
  return series;
}
const secretsRequests = () => apiserverMetric('apiserver_request_total', { resource: 'secrets', group: '' });
const openSecretWatches = async () =>
  (await apiserverMetric('apiserver_longrunning_requests', { resource: 'secrets', verb: 'WATCH' })).reduce((a, s) => a + s.value, 0);

// ------------------------------------------------------------------------------------------- identities

const bundle = await bundleSources('bench-cluster', { identity: 'src/identity/index.ts' });
const { buildUrn, encodePrivateJwk, generateIdentityKey } = await import(join(bundle, 'identity.js'));
const k8s = await import('@kubernetes/client-node');
const b64 = (s) => Buffer.from(s, 'utf8').toString('base64');
/** A valid identity (the product decodes it): a fresh key and a URN, as the Secret's data. */
function identity() {
  const key = generateIdentityKey();
  const urn = buildUrn({ region: 'us1', orgId: 1234567, runnerId: crypto.randomUUID() });
  return { fingerprint: key.kid, data: { private_key: b64(encodePrivateJwk(key)), urn: b64(urn) } };
}
const secretObject = (namespace, data) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: SECRET, namespace },
  type: 'Opaque',
  data,
});
const namespaceObject = (name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

// ------------------------------------------------------------------------------------ 1. DaemonSet phase

/**
 * Node-seconds without a Ready Pod, from a watch on the workload's Pods: the logic of
 * test/cluster/pod-watch.ts (watchCoverage), which is TypeScript and not in the built bundle, so it
 * is repeated here. It uses @kubernetes/client-node's list + Watch rather than `kubectl get pods -w
 * -o json`: kubectl prints a stream of pretty-printed objects (no line framing) and would be another
 * process competing for the two cores; the client parses each event as it arrives, in this process,
 * and each moment is the event's arrival time here, as an operator's monitoring would see it.
 */
async function watchCoverage(kc, namespace, labelSelector, nodes) {
  const pods = new Map();
  const uncoveredSince = new Map();
  const everUncovered = new Set();
  let uncoveredMs = 0;
  let mostAtOnce = 0;
  let events = 0;
  let ended;
  const isReady = (p) =>
    !p.metadata?.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const check = () => {
    const now = performance.now();
    const covered = new Set();
    for (const p of pods.values()) if (p.ready && p.node) covered.add(p.node);
    for (const node of nodes) {
      if (!covered.has(node) && !uncoveredSince.has(node)) {
        uncoveredSince.set(node, now);
        everUncovered.add(node);
      } else if (covered.has(node) && uncoveredSince.has(node)) {
        uncoveredMs += now - uncoveredSince.get(node);
        uncoveredSince.delete(node);
      }
    }
    mostAtOnce = Math.max(mostAtOnce, uncoveredSince.size);
  };
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const list = await api.listNamespacedPod({ namespace, labelSelector });
  for (const p of list.items) pods.set(p.metadata.name, { node: p.spec?.nodeName, ready: isReady(p) });
  check();
  const initiallyUncovered = uncoveredSince.size;
  const req = await new k8s.Watch(kc).watch(
    `/api/v1/namespaces/${namespace}/pods`,
    { labelSelector, resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
    (type, obj) => {
      if (type === 'BOOKMARK') return;
      events++;
      if (type === 'DELETED') pods.delete(obj.metadata.name);
      else pods.set(obj.metadata.name, { node: obj.spec?.nodeName, ready: isReady(obj) });
      check();
    },
    (err) => {
      ended = err ?? new Error('the watch ended');
    },
  );
  return {
    stop() {
      const now = performance.now();
      let open = 0;
      for (const since of uncoveredSince.values()) open += now - since;
      const watchEnded = ended;
      ended = ended ?? 'stopped';
      req.abort();
      if (watchEnded)
        throw new Error(`the Pod watch ended during the measurement (${watchEnded.message ?? watchEnded}): its figures would be partial`);
      return {
        nodeSecondsUncovered: (uncoveredMs + open) / 1000,
        nodesEverUncovered: everUncovered.size,
        mostUncoveredAtOnce: mostAtOnce,
        initiallyUncovered,
        podEvents: events,
      };
    },
  };
}

const STRATEGY = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };

function kwokNodes(names) {
  const resources = { cpu: '4', memory: '8Gi', pods: '110' };
  return names.map((name) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      // kwok manages exactly the Nodes with this annotation (scripts/control-plane.sh).
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
        [POOL.key]: POOL.value,
      },
    },
    status: { allocatable: resources, capacity: resources },
  }));
}

function daemonSetObject() {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: DS_NAME, namespace: DS_NS },
    spec: {
      selector: { matchLabels: { app: DS_NAME } },
      updateStrategy: STRATEGY,
      template: {
        metadata: { labels: { app: DS_NAME } },
        spec: {
          nodeSelector: { [POOL.key]: POOL.value },
          terminationGracePeriodSeconds: 0,
          containers: [
            {
              name: 'runner',
              image: 'registry.example/par:1',
              readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
              resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
              envFrom: [{ secretRef: { name: SECRET } }],
            },
          ],
        },
      },
    },
  };
}

/**
 * The DaemonSet at rest: its controller observed the last change, every one of the N Pods is updated
 * and available, and the Pods are exactly N, one per Node, Ready, none terminating, all of the current
 * revision. What the rollout left behind must be gone before the next measurement starts.
 */
async function daemonSetSettled(nodes) {
  const ds = await getJson(['daemonset', DS_NAME, '-n', DS_NS]);
  const s = ds.status ?? {};
  const n = nodes.length;
  if ((s.observedGeneration ?? 0) < ds.metadata.generation) return false;
  if (
    s.desiredNumberScheduled !== n ||
    s.updatedNumberScheduled !== n ||
    s.numberAvailable !== n ||
    s.numberReady !== n ||
    s.currentNumberScheduled !== n
  )
    return false;
  const pods = (await getJson(['pods', '-n', DS_NS, '-l', `app=${DS_NAME}`])).items;
  if (pods.length !== n) return false;
  const ready = (p) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const revisions = new Set(pods.map((p) => p.metadata.labels?.['controller-revision-hash']));
  const onNodes = new Set(pods.map((p) => p.spec.nodeName));
  return pods.every(ready) && revisions.size === 1 && nodes.every((node) => onNodes.has(node)) ? ds : false;
}

async function daemonSetPhase(kc) {
  const nodes = Array.from({ length: NODES }, (_, i) => `bench-node-${String(i).padStart(3, '0')}`);
  const settleTimeoutMs = Math.max(120_000, NODES * 2_000);
  log(`DaemonSet phase: ${NODES} kwok Nodes`);
  await create(namespaceObject(DS_NS));
  // `par-identity rollout` stamps the identity's fingerprint on the Pods: the Secret must exist.
  await create(secretObject(DS_NS, identity().data));
  let t = performance.now();
  await create(...kwokNodes(nodes));
  await kubectlOk(
    ['wait', '--for=condition=Ready', `--timeout=${Math.round(settleTimeoutMs / 1000)}s`, 'node', '-l', `${POOL.key}=${POOL.value}`],
    { timeoutMs: settleTimeoutMs + 30_000 },
  );
  const nodesReadyMs = performance.now() - t;
  t = performance.now();
  await create(daemonSetObject());
  await eventually(() => daemonSetSettled(nodes), `${NODES} Ready Pods of daemonset/${DS_NAME}`, settleTimeoutMs, 500);
  const podsReadyMs = performance.now() - t;
  log(`${NODES} Nodes Ready in ${(nodesReadyMs / 1000).toFixed(1)} s, ${NODES} Pods Ready in ${(podsReadyMs / 1000).toFixed(1)} s`);

  const rolloutTimeoutS = Math.max(600, NODES * 15);
  const methods = {
    native: async () => {
      const restart = await kubectl(['rollout', 'restart', `daemonset/${DS_NAME}`, '-n', DS_NS]);
      if (restart.code !== 0) throw new Error(`kubectl rollout restart: ${restart.stderr}`);
      const status = await kubectl(['rollout', 'status', `daemonset/${DS_NAME}`, '-n', DS_NS, `--timeout=${rolloutTimeoutS}s`], {
        timeoutMs: (rolloutTimeoutS + 60) * 1000,
      });
      if (status.code !== 0) throw new Error(`kubectl rollout status: ${status.stderr}`);
      return {};
    },
    'par-identity': async () => {
      const r = await run(
        process.execPath,
        [
          BIN,
          'rollout',
          `daemonset/${DS_NAME}`,
          '--surge',
          '-n',
          DS_NS,
          '--kubeconfig',
          ADMIN,
          '--timeout',
          `${rolloutTimeoutS}s`,
          '--json',
        ],
        { timeoutMs: (rolloutTimeoutS + 60) * 1000 },
      );
      if (r.code !== 0) throw new Error(`par-identity rollout exited ${r.code}: ${r.stderr}`);
      const out = JSON.parse(r.stdout);
      if (out.action !== 'rolled-out' || !out.surged || !out.strategyRestored) throw new Error(`par-identity rollout: ${r.stdout}`);
      return { ownDurationMs: out.durationMs, noReadyObservations: out.noReadyObservations };
    },
  };
  const runs = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [method, restart] of Object.entries(methods)) {
      const coverage = await watchCoverage(kc, DS_NS, `app=${DS_NAME}`, nodes);
      log(`round ${round + 1}: ${method} restart of daemonset/${DS_NAME}`);
      const cp = Object.fromEntries(COMPONENTS.map((c) => [c, pidOf(c)]));
      const cpuNow = () => ({
        machine: machineCpu(),
        controlPlane: COMPONENTS.reduce((a, c) => a + cpuSeconds(cp[c]), 0),
        bench: cpuSeconds(process.pid),
      });
      const cpu0 = cpuNow();
      const t0 = performance.now();
      const extra = await restart();
      const wallMs = performance.now() - t0;
      const cpu1 = cpuNow();
      const machineCpuSeconds = (cpu1.machine.busy - cpu0.machine.busy) / CLK_TCK;
      const controlPlaneCpuSeconds = cpu1.controlPlane - cpu0.controlPlane;
      // The restarting command's own CPU (kubectl or par-identity) is in neither: it is part of "rest".
      const cpu = {
        machineCpuSeconds,
        controlPlaneCpuSeconds,
        restCpuSeconds: Math.max(0, machineCpuSeconds - controlPlaneCpuSeconds - (cpu1.bench - cpu0.bench)),
      };
      // The rollout's end as the command reports it; then everything must be at rest again (and a
      // node still uncovered meanwhile counts until it is covered) before the next measurement.
      const ds = await eventually(
        () => daemonSetSettled(nodes),
        `daemonset/${DS_NAME} to settle after the ${method} restart`,
        settleTimeoutMs,
        250,
      );
      const cov = coverage.stop();
      if (cov.initiallyUncovered)
        throw new Error(`${cov.initiallyUncovered} node(s) had no Ready Pod before the ${method} restart started`);
      const st = ds.spec.updateStrategy;
      if (st?.type !== STRATEGY.type || st.rollingUpdate?.maxUnavailable !== 1 || st.rollingUpdate?.maxSurge !== 0)
        throw new Error(`the DaemonSet's strategy is ${JSON.stringify(ds.spec.updateStrategy)} after the ${method} restart`);
      runs.push({ round: round + 1, method, wallMs, ...cov, ...extra, cpu });
      log(
        `${method}: ${(wallMs / 1000).toFixed(1)} s, ${cov.nodeSecondsUncovered.toFixed(1)} node-seconds uncovered (${cov.nodesEverUncovered} nodes)`,
      );
      await sleep(2000); // a quiet moment between measurements
    }
  }
  const rss = controlPlaneRss();
  // Nodes and Pods out of the way: kwok's leases and the controllers' work would be noise in the watch phase.
  await kubectlOk(['delete', 'namespace', DS_NS, '--wait=false']);
  await kubectlOk(['delete', 'node', '-l', `${POOL.key}=${POOL.value}`, '--wait=false']);
  await eventually(
    async () => (await getJson(['nodes', '-l', `${POOL.key}=${POOL.value}`])).items.length === 0,
    'the bench Nodes to go',
    120_000,
    1000,
  );
  await eventually(async () => (await kubectl(['get', 'namespace', DS_NS])).code !== 0, `namespace ${DS_NS} to go`, 180_000, 1000);
  return { nodes: NODES, nodesReadyMs, podsReadyMs, runs, controlPlaneRssMiB: rss };
}

// ---------------------------------------------------------------------------------------- 2. watch phase

/** One `par-identity watch` process: its JSON lines with their arrival times here. */
async function startWatcher(i, kubeconfig, cfgDir, outDir) {
  await mkdir(join(outDir, `watcher-${i}`), { mode: 0o700 });
  const output = join(outDir, `watcher-${i}`, 'identity.json');
  const args = [BIN, 'watch', '-c', cfgDir, '--kubeconfig', kubeconfig, '-n', WATCH_NS, '--output', output, '--json'];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const w = {
    i,
    child,
    events: [],
    written: new Map(),
    stderr: '',
    result: undefined,
    exited: new Promise((resolve) => child.once('exit', resolve)),
  };
  child.once('exit', () => children.delete(child));
  child.stderr.on('data', (d) => {
    w.stderr = (w.stderr + d).slice(-4000);
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const at = performance.now();
    let e;
    try {
      e = JSON.parse(line);
    } catch {
      return;
    }
    if (!e.event) {
      w.result = e; // the result object, on exit
      return;
    }
    w.events.push({ at, event: e.event, reason: e.reason });
    if (e.event === 'written' && !w.written.has(e.fingerprint)) w.written.set(e.fingerprint, at);
  });
  return { w, output };
}

/** The watchers' events since their `mark`, by name. */
const countEvents = (watchers) => {
  const counts = {};
  for (const w of watchers) for (const e of w.events.slice(w.mark)) counts[e.event] = (counts[e.event] ?? 0) + 1;
  return counts;
};

async function watchPhase(kc) {
  log(`watch phase: ${WATCHERS} par-identity watch processes`);
  const outDir = join(scratch, 'watchers');
  await mkdir(outDir, { recursive: true });
  await create(namespaceObject(WATCH_NS));
  const first = identity();
  await create(secretObject(WATCH_NS, first.data));
  // The watchers' own identity: a ServiceAccount whose Role names the one Secret (get, list, watch).
  await create(
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: WATCHER_SA, namespace: WATCH_NS } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: WATCHER_SA, namespace: WATCH_NS },
      rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: [SECRET], verbs: ['get', 'list', 'watch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: WATCHER_SA, namespace: WATCH_NS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: WATCHER_SA },
      subjects: [{ kind: 'ServiceAccount', name: WATCHER_SA, namespace: WATCH_NS }],
    },
  );
  const token = (await kubectlOk(['create', 'token', WATCHER_SA, '-n', WATCH_NS, '--duration=2h'])).trim();
  const cluster = kc.getCurrentCluster();
  const kubeconfig = join(scratch, 'watcher.kubeconfig');
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'bench',
          cluster: { server: cluster.server, 'certificate-authority-data': readFileSync(join(CP_DIR, 'pki', 'ca.crt')).toString('base64') },
        },
      ],
      users: [{ name: WATCHER_SA, user: { token } }],
      contexts: [{ name: WATCHER_SA, context: { cluster: 'bench', user: WATCHER_SA, namespace: WATCH_NS } }],
      'current-context': WATCHER_SA,
    }),
    { mode: 0o600 },
  );
  const cfgDir = join(scratch, 'agent');
  await mkdir(cfgDir, { recursive: true });
  await writeFile(join(cfgDir, 'datadog-cluster.yaml'), 'private_action_runner:\n  enabled: true\n');

  const watchesBefore = await openSecretWatches();
  const t = performance.now();
  const watchers = [];
  for (let i = 0; i < WATCHERS; i++) {
    watchers.push((await startWatcher(i, kubeconfig, cfgDir, outDir)).w);
    await sleep(10); // a slight stagger: 100 Node.js start-ups at once only queue on 2 cores
  }
  const startTimeoutMs = Math.max(60_000, WATCHERS * 1_000);
  await eventually(
    () => {
      const dead = watchers.find((w) => w.child.exitCode !== null);
      if (dead) throw new Fatal(`watcher ${dead.i} exited ${dead.child.exitCode}: ${dead.stderr}`);
      return watchers.every((w) => w.written.has(first.fingerprint));
    },
    `${WATCHERS} watchers to write the first identity`,
    startTimeoutMs,
    100,
  );
  const allWrittenMs = performance.now() - t;
  // Every watch open on the apiserver (a watcher writes once listed; its watch opens right after).
  const watchesOpen = await eventually(
    async () => {
      const open = (await openSecretWatches()) - watchesBefore;
      return open >= WATCHERS ? open : false;
    },
    `${WATCHERS} watches on the Secret to open`,
    60_000,
    1000,
  ).catch(async () => (await openSecretWatches()) - watchesBefore);
  log(`${WATCHERS} watchers wrote the first identity in ${(allWrittenMs / 1000).toFixed(1)} s; ${watchesOpen} watches open`);

  // Changes: time from the update's response to each watcher's `written` event for that identity.
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const cpPids = Object.fromEntries(COMPONENTS.map((c) => [c, pidOf(c)]));
  const cpuOf = () => ({
    machine: machineCpu(),
    apiserver: cpuSeconds(cpPids.apiserver),
    etcd: cpuSeconds(cpPids.etcd),
    controlPlane: COMPONENTS.reduce((a, c) => a + cpuSeconds(cpPids[c]), 0),
    watchers: watchers.reduce((a, w) => a + cpuSeconds(w.child.pid), 0),
    bench: cpuSeconds(process.pid),
    at: performance.now(),
  });
  for (const w of watchers) w.mark = w.events.length;
  const loads = [loadavg1()];
  const sampler = setInterval(() => loads.push(loadavg1()), 500);
  const cpu0 = cpuOf();
  const latencies = [];
  const fromSent = [];
  const perChange = [];
  let missed = 0;
  for (let c = 0; c < CHANGES; c++) {
    const next = identity();
    const current = await api.readNamespacedSecret({ name: SECRET, namespace: WATCH_NS });
    const before = cpuOf();
    const sent = performance.now();
    await api.replaceNamespacedSecret({ name: SECRET, namespace: WATCH_NS, body: { ...current, data: next.data } });
    const t0 = performance.now();
    await eventually(
      () => watchers.every((w) => w.written.has(next.fingerprint)),
      `change ${c + 1} to be written by every watcher`,
      60_000,
      5,
    ).catch((err) => log(err.message));
    const after = cpuOf();
    const these = [];
    for (const w of watchers) {
      const at = w.written.get(next.fingerprint);
      if (at === undefined) missed++;
      else {
        these.push(at - t0);
        fromSent.push(at - sent);
      }
    }
    these.sort((a, b) => a - b);
    latencies.push(...these);
    perChange.push({
      change: c + 1,
      // The update's own round trip: a watcher may have its event before this response arrives here.
      requestMs: t0 - sent,
      written: these.length,
      p50Ms: pick(these, 0.5),
      maxMs: these.at(-1),
      machineBusyPercent: (100 * (after.machine.busy - before.machine.busy)) / (after.machine.total - before.machine.total),
      watchersCpuSeconds: after.watchers - before.watchers,
      controlPlaneCpuSeconds: after.controlPlane - before.controlPlane,
    });
    const pc = perChange.at(-1);
    log(
      `change ${c + 1}: ${these.length}/${WATCHERS} written, p50 ${pick(these, 0.5)?.toFixed(1)} ms, max ${these.at(-1)?.toFixed(1)} ms; update ${pc.requestMs.toFixed(0)} ms; machine ${pc.machineBusyPercent.toFixed(0)}% busy, watchers ${pc.watchersCpuSeconds.toFixed(2)} CPU-s`,
    );
    await sleep(1000);
  }
  const cpu1 = cpuOf();
  clearInterval(sampler);
  loads.push(loadavg1());
  latencies.sort((a, b) => a - b);
  fromSent.sort((a, b) => a - b);
  const reloadEvents = countEvents(watchers);
  const seconds = (cpu1.at - cpu0.at) / 1000;
  const machineBusySeconds = (cpu1.machine.busy - cpu0.machine.busy) / CLK_TCK;
  const ours = cpu1.controlPlane - cpu0.controlPlane + (cpu1.watchers - cpu0.watchers) + (cpu1.bench - cpu0.bench);
  const cpu = {
    windowSeconds: seconds,
    machineBusyPercentOfAllCores: (100 * (cpu1.machine.busy - cpu0.machine.busy)) / (cpu1.machine.total - cpu0.machine.total),
    cores: cpus().length,
    machineBusyCpuSeconds: machineBusySeconds,
    apiserverCpuSeconds: cpu1.apiserver - cpu0.apiserver,
    etcdCpuSeconds: cpu1.etcd - cpu0.etcd,
    controlPlaneCpuSeconds: cpu1.controlPlane - cpu0.controlPlane,
    watchersCpuSeconds: cpu1.watchers - cpu0.watchers,
    benchProcessCpuSeconds: cpu1.bench - cpu0.bench,
    // What the machine did besides this bench (other users of the same cores, the kernel).
    otherCpuSeconds: Math.max(0, machineBusySeconds - ours),
    loadavg1Max: Math.max(...loads),
    loadavg1Samples: loads,
  };

  // Idle: the requests the watchers send without changes, counted by the apiserver.
  for (const w of watchers) w.mark = w.events.length;
  const before = await secretsRequests();
  log(`idle for ${IDLE_SECONDS} s`);
  for (let s = 0; s < IDLE_SECONDS; s++) await sleep(1000);
  const after = await secretsRequests();
  const idleEvents = countEvents(watchers);
  const watchesStillOpen = (await openSecretWatches()) - watchesBefore;
  const key = (s) => `${s.labels.verb} ${s.labels.scope} ${s.labels.code}`;
  const beforeBy = new Map(before.map((s) => [key(s), s.value]));
  const delta = {};
  for (const s of after) {
    const d = s.value - (beforeBy.get(key(s)) ?? 0);
    if (d) delta[key(s)] = d;
  }
  // The watchers' requests are namespace-scoped (/api/v1/namespaces/NS/secrets); cluster-scoped ones are
  // the controllers' informers (a watch that times out and is reopened), counted apart.
  const idleRequests = Object.entries(delta).reduce((a, [k, v]) => a + (k.split(' ')[1] === 'namespace' ? v : 0), 0);
  const otherRequests = Object.entries(delta).reduce((a, [k, v]) => a + (k.split(' ')[1] === 'namespace' ? 0 : v), 0);
  const rss = watchers.map((w) => mib(rssKb(w.child.pid))).sort((a, b) => a - b);
  const alive = watchers.filter((w) => w.child.exitCode === null).length;

  for (const w of watchers) w.child.kill('SIGTERM');
  await Promise.race([Promise.all(watchers.map((w) => w.exited)), sleep(20_000)]);
  for (const w of watchers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  const results = watchers.map((w) => w.result).filter(Boolean);
  const applyErrors = (reloadEvents['apply-error'] ?? 0) + (reloadEvents.rejected ?? 0);
  return {
    watchers: WATCHERS,
    changes: CHANGES,
    allFirstWrittenMs: allWrittenMs,
    watchesOpen,
    latency: {
      samples: latencies.length,
      p50Ms: pick(latencies, 0.5),
      p99Ms: pick(latencies, 0.99),
      maxMs: latencies.at(-1),
      minMs: latencies[0],
    },
    latencyFromRequestSent: { p50Ms: pick(fromSent, 0.5), p99Ms: pick(fromSent, 0.99), maxMs: fromSent.at(-1) },
    perChange,
    failedApplies: applyErrors + missed,
    missedWrites: missed,
    reloadEvents,
    cpu,
    idle: {
      seconds: IDLE_SECONDS,
      secretsRequests: idleRequests,
      otherSecretsRequests: otherRequests,
      // The counters' sum when the window opened: non-zero shows the series were found at all.
      secretsRequestsCountedBefore: before.reduce((a, x) => a + x.value, 0),
      requestsPerReplica: idleRequests / WATCHERS,
      byVerbScopeCode: delta,
      clientEvents: idleEvents,
      watchesStillOpen,
      watchersAlive: alive,
      rssMiB: {
        first: rss.length ? mib(rssKb(watchers[0].child.pid)) || rss[0] : Number.NaN,
        median: pick(rss, 0.5),
        min: rss[0],
        max: rss.at(-1),
      },
    },
    exitResults: {
      reported: results.length,
      watchRestarts: results.reduce((a, r) => a + (r.data?.watchRestarts ?? 0), 0),
      reloadErrors: results.reduce((a, r) => a + (r.data?.reloadErrors ?? 0), 0),
    },
  };
}

// ------------------------------------------------------------------------------------------------ report

function table(header, rows) {
  const cells = [header, header.map(() => '---'), ...rows];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)));
  return cells
    .map((r) => `| ${r.map((c, i) => (r[0] === '---' ? '-'.repeat(widths[i]) : String(c).padEnd(widths[i]))).join(' | ')} |`)
    .join('\n');
}

function report(summary) {
  const lines = [];
  const cp = summary.controlPlane;
  lines.push(
    `\n## bench:cluster — node ${process.version}, ${cpus().length} cores, kubectl ${summary.kubectlVersion}; Pods Ready ${summary.podReadyMs} ms after binding (kwok)\n`,
  );
  lines.push(`control plane: ready in ${cp.readyMs} ms (control-plane.sh start; ${(cp.wallMs / 1000).toFixed(1)} s wall)`);
  const ds = summary.daemonset;
  if (ds) {
    const rss = Object.entries(ds.controlPlaneRssMiB)
      .map(([c, m]) => `${c} ${m.toFixed(0)} MiB`)
      .join(', ');
    lines.push(`control plane RSS after the DaemonSet phase: ${rss}`);
    lines.push(
      `\n### DaemonSet of ${ds.nodes} kwok Nodes (maxUnavailable 1, maxSurge 0): ${ds.nodes} Nodes Ready in ${(ds.nodesReadyMs / 1000).toFixed(1)} s, Pods Ready in ${(ds.podsReadyMs / 1000).toFixed(1)} s\n`,
    );
    const rows = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const native = ds.runs.find((r) => r.round === round && r.method === 'native');
      const par = ds.runs.find((r) => r.round === round && r.method === 'par-identity');
      const tag = ROUNDS > 1 ? ` (round ${round})` : '';
      rows.push([
        `wall time${tag}`,
        `${(native.wallMs / 1000).toFixed(1)} s`,
        `${(par.wallMs / 1000).toFixed(1)} s (${(par.wallMs / native.wallMs).toFixed(2)}×)`,
        '≤ 1.5× native',
      ]);
      rows.push([
        `node-seconds without a Ready Pod${tag}`,
        native.nodeSecondsUncovered.toFixed(1),
        par.nodeSecondsUncovered.toFixed(1),
        '0 for par-identity',
      ]);
      rows.push([
        `nodes ever without a Ready Pod${tag}`,
        `${native.nodesEverUncovered} / ${ds.nodes}`,
        `${par.nodesEverUncovered} / ${ds.nodes}`,
        '',
      ]);
      rows.push([`most nodes uncovered at once${tag}`, native.mostUncoveredAtOnce, par.mostUncoveredAtOnce, '']);
      const cpuCell = (r) =>
        `${((100 * r.cpu.machineCpuSeconds) / (r.wallMs / 1000) / cpus().length).toFixed(0)}% busy: control plane ${r.cpu.controlPlaneCpuSeconds.toFixed(0)} CPU-s, rest ${r.cpu.restCpuSeconds.toFixed(0)} CPU-s`;
      rows.push([`machine CPU meanwhile${tag}`, cpuCell(native), cpuCell(par), '']);
    }
    lines.push(table(['figure', 'native: kubectl rollout restart + status', 'par-identity rollout --surge', 'goal'], rows));
  }
  const w = summary.watch;
  if (w) {
    const l = w.latency;
    const c = w.cpu;
    lines.push(
      `\n### ${w.watchers} par-identity watch replicas on one Secret (ServiceAccount + Role with resourceNames, TokenRequest token)\n`,
    );
    lines.push(
      table(
        ['figure', 'value', 'goal'],
        [
          [
            'start-up: all wrote the first identity',
            `${(w.allFirstWrittenMs / 1000).toFixed(1)} s; ${w.watchesOpen} watches open on the apiserver`,
            '',
          ],
          [
            `Secret update response → written (${w.watchers} × ${w.changes} = ${l.samples} samples)`,
            `p50 ${l.p50Ms?.toFixed(1)} ms, p99 ${l.p99Ms?.toFixed(1)} ms, max ${l.maxMs?.toFixed(1)} ms`,
            'p99 ≤ 250 ms',
          ],
          [
            'the same from the update request sent',
            `p50 ${w.latencyFromRequestSent.p50Ms?.toFixed(1)} ms, p99 ${w.latencyFromRequestSent.p99Ms?.toFixed(1)} ms (update round trip ${w.perChange.map((x) => x.requestMs.toFixed(0)).join(', ')} ms)`,
            '',
          ],
          ['failed applies (apply-error, rejected, never written)', `${w.failedApplies}`, '0'],
          [
            `CPU over the reload phase (${c.windowSeconds.toFixed(1)} s)`,
            `machine ${c.machineBusyPercentOfAllCores.toFixed(0)}% busy of ${c.cores} cores (${c.machineBusyCpuSeconds.toFixed(1)} CPU-s): apiserver ${c.apiserverCpuSeconds.toFixed(2)} s, etcd ${c.etcdCpuSeconds.toFixed(2)} s, whole control plane ${c.controlPlaneCpuSeconds.toFixed(2)} s, watchers ${c.watchersCpuSeconds.toFixed(2)} s, this script ${c.benchProcessCpuSeconds.toFixed(2)} s, rest of the machine ${c.otherCpuSeconds.toFixed(2)} s; loadavg(1m) max ${c.loadavg1Max.toFixed(2)}`,
            '',
          ],
          [
            `requests per replica while idle (${w.idle.seconds} s, apiserver_request_total secrets)`,
            `${w.idle.requestsPerReplica.toFixed(2)} (${w.idle.secretsRequests} namespace-scoped in all; cluster-scoped, the controllers': ${w.idle.otherSecretsRequests}${
              Object.keys(w.idle.byVerbScopeCode).length
                ? ` — ${Object.entries(w.idle.byVerbScopeCode)
                    .map(([k, v]) => `${k} ×${v}`)
                    .join(', ')}`
                : ''
            }); ${w.idle.watchesStillOpen} watches still open`,
            '0 beyond the open watch',
          ],
          [
            'RSS of one idle watcher (VmRSS)',
            `${w.idle.rssMiB.first.toFixed(1)} MiB (all ${w.watchers}: median ${w.idle.rssMiB.median.toFixed(1)}, ${w.idle.rssMiB.min.toFixed(1)}–${w.idle.rssMiB.max.toFixed(1)} MiB)`,
            '',
          ],
        ],
      ),
    );
  }
  return lines.join('\n');
}

// -------------------------------------------------------------------------------------------------- main

if (!existsSync(BIN) || !existsSync(join(ROOT, 'dist', 'par-identity.js'))) throw new Error('dist/ is missing: run npm run build first');
const summary = {
  date: new Date().toISOString(),
  node: process.version,
  cores: cpus().length,
  flags: { nodes: NODES, watchers: WATCHERS, changes: CHANGES, idleSeconds: IDLE_SECONDS, rounds: ROUNDS },
  podReadyMs: Number(process.env.PAR_CONTROL_PLANE_POD_READY_MS ?? 2000),
  loadavgAtStart: readFileSync('/proc/loadavg', 'utf8').trim(),
};
let failed;
try {
  log(`starting a control plane in ${CP_DIR}`);
  summary.controlPlane = await startControlPlane();
  summary.kubectlVersion = JSON.parse((await kubectlOk(['version', '--client', '-o', 'json'])).trim()).clientVersion.gitVersion;
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(ADMIN);
  if (!flags['skip-daemonset']) summary.daemonset = await daemonSetPhase(kc);
  if (!flags['skip-watch']) summary.watch = await watchPhase(kc);
  summary.controlPlane.rssAtEndMiB = controlPlaneRss();
} catch (err) {
  failed = err;
} finally {
  cleanupSync();
}
await writeFile(SUMMARY, `${JSON.stringify(summary, null, 2)}\n`);
if (summary.controlPlane) console.log(report(summary));
console.log(`\nsummary: ${SUMMARY}`);
if (failed) {
  console.error(failed);
  process.exitCode = 1;
}
await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
