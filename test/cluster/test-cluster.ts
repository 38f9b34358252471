import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { type KubeEmulator, type PolicyRule, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';

// One suite, two clusters (docs/control-plane.md): the tests in test/cluster/ talk to "the cluster"
// through an admin kubeconfig and kubectl only, so the same test runs against the Kubernetes API
// emulator (npm test) and against the real control plane of scripts/control-plane.sh
// (npm run test:cluster, PAR_IDENTITY_TEST_CLUSTER=real). What only one of them can do (stop the
// apiserver process, inject faults into the emulator) is behind `only(...)`, with the reason.

export type ClusterKind = 'emulator' | 'real';
export const CLUSTER_KIND: ClusterKind = process.env.PAR_IDENTITY_TEST_CLUSTER === 'real' ? 'real' : 'emulator';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface NodeSpec {
  name: string;
  cpu?: string;
  memory?: string;
  pods?: number;
  labels?: Record<string, string>;
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface TestCluster {
  kind: ClusterKind;
  /** The admin kubeconfig (certificates on the real cluster, a bearer token on the emulator). */
  adminKubeconfig: string;
  /** Scratch folder of this cluster handle, removed by close(). */
  dir: string;
  /** kubectl with the admin kubeconfig unless one is given; never throws. */
  kubectl(args: string[], opts?: { stdin?: string; kubeconfig?: string }): Promise<CommandResult>;
  /** kubectl that must succeed: its stdout. */
  kubectlOk(args: string[], opts?: { stdin?: string; kubeconfig?: string }): Promise<string>;
  /** `kubectl get -o json`, undefined for NotFound. Loosely typed: assertions walk nested fields. */
  // biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects read by test assertions only
  getJson<T = Record<string, any>>(resource: string, name: string, namespace?: string): Promise<T | undefined>;
  /** `kubectl create -f -` of objects (JSON). */
  create(...objects: object[]): Promise<void>;
  /** A namespace of its own for one test: `<prefix>-<random>`. */
  freshNamespace(prefix: string): Promise<string>;
  /**
   * Nodes whose Pods run (kwok): on the real cluster only. The emulator stores workloads but runs no
   * scheduler, controllers or kubelet; tests of workload behaviour are `workloadsRun`-gated.
   */
  addNodes(nodes: NodeSpec[]): Promise<void>;
  removeNodes(names: string[]): Promise<void>;
  /**
   * A ServiceAccount with a Role (these rules) bound to it in `namespace`, and a kubeconfig holding
   * a token issued for it by the TokenRequest API (JSON through `kubectl create --raw`, see issueToken).
   */
  serviceAccountKubeconfig(namespace: string, name: string, rules: PolicyRule[]): Promise<string>;
  /** The emulator behind this handle; only on the emulator (`only('emulator', ...)`). */
  emulator?: KubeEmulator;
  /** Stops and starts the apiserver process (state kept in etcd); only on the real cluster. */
  restartApiserver?(): Promise<void>;
  close(): Promise<void>;
}

/** Run a command, collect its output; never throws for a non-zero exit. */
export function run(
  cmd: string,
  args: string[],
  opts: { stdin?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

function kubectlFor(adminKubeconfig: string): Pick<TestCluster, 'kubectl' | 'kubectlOk' | 'getJson' | 'create'> {
  const kubectl: TestCluster['kubectl'] = (args, opts = {}) =>
    run('kubectl', [`--kubeconfig=${opts.kubeconfig ?? adminKubeconfig}`, ...args], { stdin: opts.stdin });
  const kubectlOk: TestCluster['kubectlOk'] = async (args, opts) => {
    const r = await kubectl(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    kubectl,
    kubectlOk,
    async getJson(resource, name, namespace) {
      const r = await kubectl(['get', resource, name, '-o', 'json', ...(namespace ? ['-n', namespace] : [])]);
      if (r.code !== 0) {
        if (/NotFound|not found/.test(r.stderr)) return undefined;
        throw new Error(`kubectl get ${resource} ${name}: ${r.stderr}`);
      }
      return JSON.parse(r.stdout);
    },
    async create(...objects) {
      await kubectlOk(['create', '-f', '-'], { stdin: objects.map((o) => JSON.stringify(o)).join('\n') });
    },
  };
}

function roleObjects(namespace: string, name: string, rules: PolicyRule[]): object[] {
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  ];
}

/** A kubeconfig of the admin one's cluster with another user: a bearer token. */
async function tokenKubeconfig(adminKubeconfig: string, token: string, namespace: string): Promise<string> {
  const admin = parse(await readFile(adminKubeconfig, 'utf8'));
  const cluster = admin.clusters[0];
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [cluster],
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'sa', context: { cluster: cluster.name, user: 'sa', namespace } }],
    'current-context': 'sa',
  });
}

function common(dir: string, adminKubeconfig: string, kind: ClusterKind) {
  const k = kubectlFor(adminKubeconfig);
  const base = {
    ...k,
    kind,
    adminKubeconfig,
    dir,
    async freshNamespace(prefix: string) {
      const name = `${prefix}-${randomBytes(3).toString('hex')}`;
      await k.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      return name;
    },
    async serviceAccountKubeconfig(namespace: string, name: string, rules: PolicyRule[]) {
      await k.create(...roleObjects(namespace, name, rules));
      const token = await issueToken(k, namespace, name, 3600);
      const path = join(dir, `${namespace}-${name}.kubeconfig`);
      await writeFile(path, await tokenKubeconfig(adminKubeconfig, token, namespace), { mode: 0o600 });
      return path;
    },
  };
  return base;
}

/**
 * A TokenRequest for a ServiceAccount, in JSON (`kubectl create token` sends protobuf, which the
 * emulator does not speak): the token. Throws with kubectl's stderr when refused.
 */
export async function issueToken(
  k: Pick<TestCluster, 'kubectl'>,
  namespace: string,
  serviceAccount: string,
  expirationSeconds: number,
): Promise<string> {
  const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } });
  const r = await k.kubectl(['create', '--raw', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, '-f', '-'], {
    stdin: body,
  });
  if (r.code !== 0) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} refused: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { status: { token: string } }).status.token;
}

async function emulatorCluster(): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'par-test-cluster-'));
  const emulator = await startKubeEmulator();
  seedNamespaces(emulator, ['default']);
  const adminKubeconfig = join(dir, 'admin.kubeconfig');
  await emulator.writeKubeconfig(adminKubeconfig);
  const base = common(dir, adminKubeconfig, 'emulator');
  return {
    ...base,
    emulator,
    async addNodes() {
      throw new Error(`addNodes: Pods run on the real cluster only; gate the test with workloadsRun ${workloadsRun.label}`);
    },
    async removeNodes() {
      throw new Error('removeNodes: the real cluster only (workloadsRun)');
    },
    async close() {
      await emulator.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function realCluster(): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'par-test-cluster-'));
  const adminKubeconfig = process.env.KUBECONFIG;
  if (!adminKubeconfig) throw new Error('PAR_IDENTITY_TEST_CLUSTER=real needs KUBECONFIG (scripts/control-plane.sh env)');
  const base = common(dir, adminKubeconfig, 'real');
  return {
    ...base,
    async addNodes(nodes) {
      await base.create(
        ...nodes.map((n) => ({
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name: n.name,
            // kwok manages exactly the Nodes with this annotation (scripts/control-plane.sh).
            annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
            labels: {
              'kubernetes.io/hostname': n.name,
              'kubernetes.io/os': 'linux',
              'kubernetes.io/arch': 'amd64',
              type: 'kwok',
              ...n.labels,
            },
          },
          status: {
            allocatable: { cpu: n.cpu ?? '4', memory: n.memory ?? '8Gi', pods: String(n.pods ?? 110) },
            capacity: { cpu: n.cpu ?? '4', memory: n.memory ?? '8Gi', pods: String(n.pods ?? 110) },
          },
        })),
      );
      // Ready when kwok has initialised them (their Ready condition is True).
      await base.kubectlOk(['wait', '--for=condition=Ready', '--timeout=60s', ...nodes.map((n) => `node/${n.name}`)]);
    },
    async removeNodes(names) {
      if (names.length) await base.kubectl(['delete', 'node', '--wait=false', ...names]);
    },
    async restartApiserver() {
      const r = await run('bash', [join(ROOT, 'scripts/control-plane.sh'), 'restart-apiserver'], { timeoutMs: 120_000 });
      if (r.code !== 0) throw new Error(`restart-apiserver: ${r.stderr}`);
    },
    async close() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function startTestCluster(): Promise<TestCluster> {
  return CLUSTER_KIND === 'real' ? realCluster() : emulatorCluster();
}

/**
 * Marks what one kind of cluster alone can run, with the reason; on the other kind the test is
 * reported as skipped with that reason in its name (never silently).
 */
export function only(kind: ClusterKind, reason: string): { skip: boolean; label: string } {
  return { skip: CLUSTER_KIND !== kind, label: `[${kind} only: ${reason}]` };
}

/**
 * Tests of workload behaviour (Pods scheduled and made Ready, a surge rollout, the capacity fallback,
 * a CronJob's Job running): the real control plane only (kwok runs the Pods), in `npm run test:cluster`.
 */
export const workloadsRun = only(
  'real',
  'Pods run only on the real control plane (kwok); the emulator stores workloads but runs no scheduler, controllers or kubelet',
);

/** Resolves once the process has stopped itself (a `PAR_IDENTITY_FAILPOINT=<step>:stop`): state "T" in /proc. */
export function stoppedByFailpoint(pid: number): Promise<boolean> {
  return eventually(async () => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
  }, `process ${pid} to stop at its failpoint`);
}

/** Polls until check() returns a truthy value; an event-free cluster is only observable by asking. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
