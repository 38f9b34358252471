import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterConnection } from '../../src/kube/index.js';
import { resolveCluster } from '../../src/kube/cluster-connection.js';
import { findKubectl } from '../emulators/kube-helpers.js';

// The connection is chosen as kubectl chooses it. Where kubectl is installed (always in CI),
// each choice is compared with `kubectl config view --minify --raw -o json` on the same files.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-kubeconfig-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Ctx {
  name: string;
  cluster: string;
  user: string;
  namespace?: string;
}

async function kubeconfigFile(
  name: string,
  body: { clusters?: [string, string][]; users?: [string, string][]; contexts?: Ctx[]; current?: string },
): Promise<string> {
  const path = join(dir, name);
  const doc: Record<string, unknown> = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: (body.clusters ?? []).map(([n, server]) => ({ name: n, cluster: { server } })),
    users: (body.users ?? []).map(([n, token]) => ({ name: n, user: { token } })),
    contexts: (body.contexts ?? []).map((c) => ({
      name: c.name,
      context: { cluster: c.cluster, user: c.user, ...(c.namespace ? { namespace: c.namespace } : {}) },
    })),
  };
  if (body.current) doc['current-context'] = body.current;
  await writeFile(path, stringify(doc), { mode: 0o600 });
  return path;
}

/** What we picked, in kubectl's terms. */
function picked(conn: ClusterConnection) {
  return {
    server: conn.server,
    context: conn.context,
    user: conn.user,
    token: conn.userEntry?.token,
    contextNamespace: conn.config.contexts.find((c) => c.name === conn.context)?.namespace,
  };
}

const kubectlPath = findKubectl();
const mustRun = process.env['CI'] === 'true';

/** kubectl's own choice for the same environment. */
function kubectlPick(env: Record<string, string>, args: string[] = []) {
  const out = execFileSync(kubectlPath!, ['config', 'view', '--minify', '--raw', '-o', 'json', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, ...env },
    encoding: 'utf8',
  });
  const view = JSON.parse(out) as {
    'current-context': string;
    contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
    clusters: { cluster: { server: string } }[];
    users: { name: string; user: { token?: string } }[];
  };
  const ctx = view.contexts[0]!;
  return {
    server: view.clusters[0]!.cluster.server,
    context: ctx.name,
    user: ctx.context.user,
    token: view.users[0]?.user.token,
    contextNamespace: ctx.context.namespace,
  };
}

async function twoFiles() {
  // First file: no current-context; defines c1, u1 and the context ctx-a.
  const a = await kubeconfigFile('a.yaml', {
    clusters: [['c1', 'https://127.0.0.1:6443']],
    users: [
      ['u1', 'token-a1'],
      ['u2', 'token-a2'],
    ],
    contexts: [{ name: 'ctx-a', cluster: 'c1', user: 'u1' }],
  });
  // Second: redefines c1 and u2 (the first file's win), adds ctx-b, sets current-context.
  const b = await kubeconfigFile('b.yaml', {
    clusters: [
      ['c1', 'https://127.0.0.2:7443'],
      ['c2', 'https://127.0.0.3:8443'],
    ],
    users: [['u2', 'token-b2']],
    contexts: [
      { name: 'ctx-b', cluster: 'c1', user: 'u2', namespace: 'ns-b' },
      { name: 'ctx-a', cluster: 'c2', user: 'u2' },
    ],
    current: 'ctx-b',
  });
  // Third: its current-context comes too late to count.
  const c = await kubeconfigFile('c.yaml', {
    clusters: [['c3', 'https://127.0.0.4:9443']],
    users: [['u3', 't3']],
    contexts: [{ name: 'ctx-c', cluster: 'c3', user: 'u3' }],
    current: 'ctx-c',
  });
  return [a, join(dir, 'missing.yaml'), b, c].join(delimiter);
}

describe('resolveCluster picks what kubectl picks', () => {
  it('a merged KUBECONFIG: first file wins each name, first current-context wins, missing files ignored', async () => {
    const KUBECONFIG = await twoFiles();
    const conn = await resolveCluster({ env: { KUBECONFIG, HOME: dir } });
    expect(picked(conn)).toEqual({
      server: 'https://127.0.0.1:6443',
      context: 'ctx-b',
      user: 'u2',
      token: 'token-a2',
      contextNamespace: 'ns-b',
    });
    expect(conn.sourceKind).toBe('KUBECONFIG');
    expect(conn.namespace).toBe('ns-b');
    expect(conn.namespaceSource).toBe('context ctx-b');
    expect(conn.warnings.join('\n')).toContain('missing.yaml');
    if (kubectlPath || mustRun) expect(picked(conn)).toEqual(kubectlPick({ KUBECONFIG }));
  });

  it('--context switches context, cluster, user and namespace', async () => {
    const KUBECONFIG = await twoFiles();
    const conn = await resolveCluster({ env: { KUBECONFIG, HOME: dir }, context: 'ctx-a' });
    // ctx-a is defined in both files: the first file's (cluster c1, user u1) wins.
    expect(picked(conn)).toEqual({
      server: 'https://127.0.0.1:6443',
      context: 'ctx-a',
      user: 'u1',
      token: 'token-a1',
      contextNamespace: undefined,
    });
    expect(conn.namespace).toBe('default');
    if (kubectlPath || mustRun) expect(picked(conn)).toEqual(kubectlPick({ KUBECONFIG }, ['--context', 'ctx-a']));
  });

  it('a context with a namespace gives the namespace; -n and kube_resources_namespace come first', async () => {
    const file = await kubeconfigFile('ns.yaml', {
      clusters: [['c', 'https://127.0.0.1:6443']],
      users: [['u', 't']],
      contexts: [{ name: 'x', cluster: 'c', user: 'u', namespace: 'team-ns' }],
      current: 'x',
    });
    const conn = await resolveCluster({ env: { HOME: dir }, kubeconfig: file });
    expect([conn.namespace, conn.namespaceSource]).toEqual(['team-ns', 'context x']);
    if (kubectlPath || mustRun) expect(picked(conn)).toEqual(kubectlPick({}, ['--kubeconfig', file]));
    const fromConfig = await resolveCluster({
      env: { HOME: dir },
      kubeconfig: file,
      configNamespace: { value: 'agent-ns', source: 'datadog-cluster.yaml' },
    });
    expect([fromConfig.namespace, fromConfig.namespaceSource]).toEqual(['agent-ns', 'kube_resources_namespace (datadog-cluster.yaml)']);
    const fromFlag = await resolveCluster({
      env: { HOME: dir },
      kubeconfig: file,
      namespace: 'flag-ns',
      configNamespace: { value: 'agent-ns', source: 'x' },
    });
    expect([fromFlag.namespace, fromFlag.namespaceSource]).toEqual(['flag-ns', '--namespace']);
  });
});

describe('resolveCluster precedence', () => {
  async function saRoot(namespace: string): Promise<string> {
    const root = join(dir, 'pod');
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'token'), 'sa-token');
    await writeFile(join(sa, 'ca.crt'), '');
    await writeFile(join(sa, 'namespace'), `${namespace}\n`);
    return root;
  }
  const one = (name: string, server: string) =>
    kubeconfigFile(name, {
      clusters: [['c', server]],
      users: [['u', 't']],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      current: 'x',
    });

  it('--kubeconfig > KUBECONFIG > kubernetes_kubeconfig_path > in-cluster > ~/.kube/config', async () => {
    const flag = await one('flag.yaml', 'https://127.0.0.1:1001');
    const env1 = await one('env.yaml', 'https://127.0.0.1:1002');
    const cfg = await one('cfg.yaml', 'https://127.0.0.1:1003');
    await mkdir(join(dir, '.kube'));
    await one('.kube/config', 'https://127.0.0.1:1005');
    const pod = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '1004', PAR_IDENTITY_SA_ROOT: await saRoot('pod-ns') };
    const env = { HOME: dir, KUBECONFIG: env1, ...pod };
    expect((await resolveCluster({ env, kubeconfig: flag, configKubeconfig: cfg })).server).toBe('https://127.0.0.1:1001');
    expect((await resolveCluster({ env, configKubeconfig: cfg })).server).toBe('https://127.0.0.1:1002');
    expect((await resolveCluster({ env: { ...env, KUBECONFIG: undefined }, configKubeconfig: cfg })).server).toBe('https://127.0.0.1:1003');
    const inPod = await resolveCluster({ env: { ...env, KUBECONFIG: undefined } });
    expect([inPod.server, inPod.sourceKind, inPod.namespace, inPod.namespaceSource, inPod.agentNamespace]).toEqual([
      'https://127.0.0.1:1004',
      'in-cluster',
      'pod-ns',
      'service-account namespace file',
      'pod-ns',
    ]);
    const home = await resolveCluster({ env: { HOME: dir } });
    // Off-cluster the agent's own namespace is unknown (docs/protocol.md §6c), never `default`.
    expect([home.server, home.sourceKind, home.agentNamespace]).toEqual(['https://127.0.0.1:1005', 'home', undefined]);
  });

  it('a KUBECONFIG naming no existing file is ignored but ~/.kube/config is not read (kubectl), and nothing found is an error, never localhost:8080', async () => {
    await mkdir(join(dir, '.kube'));
    await one('.kube/config', 'https://127.0.0.1:1005');
    const err = await resolveCluster({ env: { HOME: dir, KUBECONFIG: join(dir, 'nope.yaml') } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'KUBE_NOT_CONFIGURED', exitCode: 9 });
    expect((err as Error).message).toContain('no Kubernetes configuration found');
    expect(await resolveCluster({ env: { HOME: join(dir, 'empty-home') } }).catch((e: unknown) => e)).toMatchObject({
      code: 'KUBE_NOT_CONFIGURED',
    });
  });

  it('refuses a missing --kubeconfig, an unknown --context and a dangling current-context', async () => {
    await expect(resolveCluster({ env: { HOME: dir }, kubeconfig: join(dir, 'absent') })).rejects.toMatchObject({
      code: 'KUBE_NOT_CONFIGURED',
      message: expect.stringContaining('does not exist'),
    });
    const file = await one('one.yaml', 'https://127.0.0.1:1001');
    await expect(resolveCluster({ env: { HOME: dir }, kubeconfig: file, context: 'other' })).rejects.toMatchObject({
      code: 'KUBE_NOT_CONFIGURED',
      hint: expect.stringContaining('Pick one of: x'),
    });
    const dangling = await kubeconfigFile('dangling.yaml', {
      clusters: [['c', 'https://127.0.0.1:1']],
      users: [['u', 't']],
      contexts: [],
      current: 'gone',
    });
    await expect(resolveCluster({ env: { HOME: dir }, kubeconfig: dangling })).rejects.toMatchObject({
      code: 'KUBE_NOT_CONFIGURED',
      message: expect.stringContaining('gone'),
    });
  });

  it('warns that NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored', async () => {
    const file = await one('one.yaml', 'https://127.0.0.1:1001');
    const conn = await resolveCluster({ env: { HOME: dir, NODE_TLS_REJECT_UNAUTHORIZED: '0' }, kubeconfig: file });
    expect(conn.warnings).toEqual([expect.stringContaining('NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored')]);
    expect((await resolveCluster({ env: { HOME: dir }, kubeconfig: file })).warnings).toEqual([]);
  });

  it('creates each API client once, lazily', async () => {
    const conn = await resolveCluster({ env: { HOME: dir }, kubeconfig: await one('one.yaml', 'https://127.0.0.1:1001') });
    expect(conn.core()).toBe(conn.core());
    expect(conn.apps()).not.toBe(conn.core());
  });
});
