import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeEmulator } from '../../emulators/kube/index.js';
import { findKubectl, secret, startSeeded } from './kube-helpers.js';
import { canI, whoami } from './access-review.js';
import { kubectlIn } from './kubectl-runner.js';

const kubectlPath = findKubectl();
const mustRun = process.env['CI'] === 'true';
if (!kubectlPath && !mustRun) {
  console.warn('kube-kubectl tests skipped: no kubectl on PATH (they are required when CI=true)');
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let emu: KubeEmulator;
let dir: string;
let adminConfig: string;
let limited: string;

function kubectl(args: string[], config = adminConfig): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlPath!, ['--kubeconfig', config, '--cache-dir', join(dir, 'cache'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A long-running kubectl whose output is read while it runs. */
function kubectlStream(args: string[]): {
  child: ChildProcess;
  out: () => string;
  waitFor: (pred: (out: string) => boolean) => Promise<void>;
} {
  const child = spawn(kubectlPath!, ['--kubeconfig', adminConfig, '--cache-dir', join(dir, 'cache'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', (d) => {
    out += d;
    wake();
  });
  child.stderr!.on('data', (d) => {
    err += d;
  });
  child.on('close', wake);
  return {
    child,
    out: () => out,
    waitFor: async (pred) => {
      const deadline = Date.now() + 10_000;
      while (!pred(out)) {
        if (child.exitCode !== null) throw new Error(`kubectl exited ${child.exitCode}: ${err}`);
        if (Date.now() > deadline) throw new Error(`timed out; stdout so far: ${out}; stderr: ${err}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 200);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    },
  };
}

/** The emulator answers a watch's headers and subscribes in the same tick, so a 200 means it is live. */
async function watchEstablished(name: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!emu.requests.some((r) => r.verb === 'watch' && r.name === name && r.status === 200)) {
    if (Date.now() > deadline) throw new Error('kubectl did not open its watch');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(!kubectlPath && !mustRun)('kubectl against the emulator', () => {
  beforeAll(async () => {
    expect(kubectlPath, 'kubectl must be on PATH when CI=true').toBeTruthy();
    emu = await startSeeded();
    dir = await mkdtemp(join(tmpdir(), 'kube-kubectl-'));
    adminConfig = join(dir, 'admin.yaml');
    await emu.writeKubeconfig(adminConfig, { namespace: 'default' });
    limited = join(dir, 'limited.yaml');
    emu.addToken('kubectl-limited', {
      user: 'system:serviceaccount:ns1:runner',
      namespace: 'ns1',
      rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['kcreate'], verbs: ['get'] }],
    });
    await emu.writeKubeconfig(limited, { token: 'kubectl-limited', namespace: 'ns1' });
  });
  afterAll(async () => {
    await emu?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('get secret -o json returns the stored object', async () => {
    const stored = emu.createObject(secret('kget', 'default', { token: Buffer.from('s3cr3t').toString('base64') }));
    const run = await kubectl(['get', 'secret', 'kget', '-o', 'json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const obj = JSON.parse(run.stdout);
    expect(obj.kind).toBe('Secret');
    expect(obj.data).toEqual({ token: Buffer.from('s3cr3t').toString('base64') });
    expect(obj.metadata.uid).toBe(stored.metadata.uid);
    expect(obj.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
  });

  it("get without -o prints kubectl's own columns (the fake serves JSON, never a Table)", async () => {
    emu.createObject(secret('ktable', 'ns1', { a: 'YQ==', b: 'Yg==' }));
    const run = await kubectl(['get', 'secrets', '-n', 'ns1']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('ktable');
  });

  it('create -f a Secret manifest (with default validation)', async () => {
    const file = join(dir, 'create.yaml');
    await writeFile(
      file,
      [
        'apiVersion: v1',
        'kind: Secret',
        'metadata:',
        '  name: kcreate',
        '  namespace: ns1',
        'type: Opaque',
        'stringData:',
        '  password: hunter2',
        '',
      ].join('\n'),
    );
    const run = await kubectl(['create', '-f', file]);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('secret/kcreate created');
    expect(run.code).toBe(0);
    const stored = emu.getObject('v1', 'Secret', 'ns1', 'kcreate')!;
    expect(stored['data']).toEqual({ password: Buffer.from('hunter2').toString('base64') });
    const create = emu.requests.find((r) => r.verb === 'create' && r.name === '' && r.namespace === 'ns1');
    expect(create?.query['fieldValidation']).toBe('Strict');
  });

  it('replace -f with a stale resourceVersion fails with the Conflict message', async () => {
    const orig = emu.createObject(secret('kstale'));
    emu.updateObject({ ...orig, data: { k: Buffer.from('newer').toString('base64') } });
    const file = join(dir, 'stale.json');
    await writeFile(file, JSON.stringify({ ...orig, data: { k: Buffer.from('older').toString('base64') } }));
    const run = await kubectl(['replace', '-f', file]);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim()).toBe(
      `Error from server (Conflict): error when replacing "${file}": Operation cannot be fulfilled on secrets "kstale": the object has been modified; please apply your changes to the latest version and try again`,
    );
    expect(
      Buffer.from((emu.getObject('v1', 'Secret', 'default', 'kstale')!['data'] as Record<string, string>)['k']!, 'base64').toString(),
    ).toBe('newer');
  });

  it('replace -f with the current resourceVersion succeeds', async () => {
    const cur = emu.createObject(secret('kfresh'));
    const file = join(dir, 'fresh.json');
    await writeFile(file, JSON.stringify({ ...cur, data: { k: 'bmV3' } }));
    const run = await kubectl(['replace', '-f', file]);
    expect(run.stdout.trim()).toBe('secret/kfresh replaced');
    expect(emu.getObject('v1', 'Secret', 'default', 'kfresh')!['data']).toEqual({ k: 'bmV3' });
  });

  it('delete removes the object (and kubectl sees it gone)', async () => {
    emu.createObject(secret('kdel'));
    const run = await kubectl(['delete', 'secret', 'kdel']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe('secret "kdel" deleted');
    expect(emu.getObject('v1', 'Secret', 'default', 'kdel')).toBeUndefined();
    const again = await kubectl(['get', 'secret', 'kdel']);
    expect(again.code).not.toBe(0);
    expect(again.stderr.trim()).toBe('Error from server (NotFound): secrets "kdel" not found');
  });

  it('reports server errors the way kubectl prints them', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, ['apiVersion: v1', 'kind: Secret', 'metadata:', '  name: kbad', 'data:', '  k: not-base64!', ''].join('\n'));
    const run = await kubectl(['create', '-f', file]);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim()).toBe(
      `Error from server (BadRequest): error when creating "${file}": Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3`,
    );
  });

  it('shows RBAC denials with the apiserver message', async () => {
    const ok = await kubectl(['get', 'secret', 'kcreate', '-o', 'name'], limited);
    expect(ok.stdout.trim()).toBe('secret/kcreate');
    const denied = await kubectl(['get', 'secret', 'ktable'], limited);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr.trim()).toBe(
      'Error from server (Forbidden): secrets "ktable" is forbidden: User "system:serviceaccount:ns1:runner" cannot get resource "secrets" in API group "" in the namespace "ns1"',
    );
  });

  it('patch --type merge updates through the API', async () => {
    emu.createObject(secret('kpatch'));
    const run = await kubectl(['patch', 'secret', 'kpatch', '--type', 'merge', '-p', '{"metadata":{"labels":{"rotated":"yes"}}}']);
    expect(run.stdout.trim()).toBe('secret/kpatch patched');
    expect(emu.getObject('v1', 'Secret', 'default', 'kpatch')?.metadata.labels).toEqual({ rotated: 'yes' });
  });

  it('get --watch -o name sees an update made through the store', async () => {
    const s = emu.createObject(secret('kwatch'));
    const w = kubectlStream(['get', 'secret', 'kwatch', '--watch', '-o', 'name']);
    try {
      await w.waitFor((o) => o.includes('secret/kwatch'));
      await watchEstablished('kwatch');
      emu.updateObject({ ...s, data: { k: 'dXBkYXRlZA==' } });
      // One line for the initial GET, one for the MODIFIED event (kubectl skips the watch's synthetic ADDED).
      await w.waitFor((o) => o.trim().split('\n').length >= 2);
      expect(w.out().trim().split('\n')).toEqual(['secret/kwatch', 'secret/kwatch']);
    } finally {
      w.child.kill();
    }
  });

  it('get -l --watch -o name prints an object only once a store update brings it into the selection', async () => {
    const s = emu.createObject(secret('kwatchsel', 'ns2'));
    const w = kubectlStream(['get', 'secrets', '-n', 'ns2', '-l', 'watch=me', '--watch', '-o', 'name']);
    try {
      const deadline = Date.now() + 10_000;
      while (!emu.requests.some((r) => r.verb === 'watch' && r.namespace === 'ns2' && r.status === 200)) {
        if (Date.now() > deadline) throw new Error('kubectl did not open its watch');
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(w.out()).toBe('');
      emu.updateObject({ ...s, metadata: { ...s.metadata, labels: { watch: 'me' } } });
      await w.waitFor((o) => o.includes('\n'));
      expect(w.out()).toBe('secret/kwatchsel\n');
    } finally {
      w.child.kill();
    }
  });

  it('get --watch -o json streams the updated object', async () => {
    const s = emu.createObject(secret('kwatchjson'));
    const w = kubectlStream(['get', 'secret', 'kwatchjson', '--watch', '-o', 'json']);
    try {
      await w.waitFor((o) => o.includes('"kwatchjson"'));
      await watchEstablished('kwatchjson');
      const updated = emu.updateObject({ ...s, data: { k: Buffer.from('watched').toString('base64') } });
      // kubectl writes a document in several chunks: wait for the whole of the one with the new version.
      const parsed = (o: string) => o.split(/\n(?=\{)/).map((d) => JSON.parse(d) as { data: unknown; metadata: { uid: string } });
      const complete = (o: string) => {
        try {
          parsed(o);
          return true;
        } catch {
          return false;
        }
      };
      await w.waitFor((o) => o.includes(`"resourceVersion": "${updated.metadata.resourceVersion}"`) && complete(o));
      const docs = parsed(w.out());
      const last = docs[docs.length - 1];
      expect(last.data).toEqual({ k: Buffer.from('watched').toString('base64') });
      expect(last.metadata.uid).toBe(s.metadata.uid);
    } finally {
      w.child.kill();
    }
  });

  it("a typed create (kubectl sends protobuf) is refused with the apiserver's 415: the fake speaks JSON only", async () => {
    const sec = await kubectl(['create', 'secret', 'generic', 'kproto', '-n', 'ns1', '--from-literal=user=admin']);
    expect(sec.code).not.toBe(0);
    expect(emu.getObject('v1', 'Secret', 'ns1', 'kproto')).toBeUndefined();
    expect(emu.requests.filter((r) => r.verb === 'create' && r.resource === 'secrets').map((r) => r.status)).toContain(415);
  });

  it('apply -f creates, then patches with a strategic merge', async () => {
    const file = join(dir, 'deploy.yaml');
    const manifest = (image: string) =>
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: kapply, namespace: ns2}',
        'spec:',
        '  replicas: 1',
        '  selector: {matchLabels: {app: kapply}}',
        '  template:',
        '    metadata: {labels: {app: kapply}}',
        `    spec: {containers: [{name: main, image: "${image}"}]}`,
        '',
      ].join('\n');
    await writeFile(file, manifest('nginx:1.27'));
    expect((await kubectl(['apply', '-f', file])).stdout.trim()).toBe('deployment.apps/kapply created');
    await writeFile(file, manifest('nginx:1.28'));
    expect((await kubectl(['apply', '-f', file])).stdout.trim()).toBe('deployment.apps/kapply configured');
    const d = emu.getObject('apps/v1', 'Deployment', 'ns2', 'kapply')!;
    expect((d['spec'] as { template: { spec: { containers: Array<{ image: string }> } } }).template.spec.containers[0]!.image).toBe(
      'nginx:1.28',
    );
    expect(d.metadata.generation).toBe(2);
    expect(d.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toContain('nginx:1.28');
  });

  it('scale goes through the scale subresource', async () => {
    const run = await kubectl(['scale', 'deployment', 'kapply', '-n', 'ns2', '--replicas=4']);
    expect(run.stdout.trim()).toBe('deployment.apps/kapply scaled');
    expect((emu.getObject('apps/v1', 'Deployment', 'ns2', 'kapply')!['spec'] as { replicas: number }).replicas).toBe(4);
    expect(emu.requests.some((r) => r.subresource === 'scale' && r.verb === 'patch' && r.status === 200)).toBe(true);
  });

  it('access reviews (what auth can-i and whoami ask, in JSON) answer from the token grants', async () => {
    const asLimited = (args: string[], stdin: string) => kubectlIn(dir, limited)(args, stdin);
    expect(await canI(asLimited, 'get', 'secrets/kcreate', { namespace: 'ns1' })).toBe('yes');
    expect(await canI(asLimited, 'get', 'secrets', { namespace: 'ns1' })).toBe('no');
    expect((await whoami(asLimited)).username).toBe('system:serviceaccount:ns1:runner');
  });

  it('create -f with a misspelt field fails under kubectl strict validation', async () => {
    const file = join(dir, 'typo.yaml');
    await writeFile(file, ['apiVersion: v1', 'kind: Secret', 'metadata: {name: ktypo}', 'stringdata: {a: b}', ''].join('\n'));
    const run = await kubectl(['create', '-f', file]);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim()).toBe(
      `Error from server (BadRequest): error when creating "${file}": Secret in version "v1" cannot be handled as a Secret: strict decoding error: unknown field "stringdata"`,
    );
    expect(emu.getObject('v1', 'Secret', 'default', 'ktypo')).toBeUndefined();
  });
});
