import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LocalFixture, localFixture } from './local-fixture.js';
import { BIN, cleanEnv } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import { identityData, type KubeFixture, kubeFixture, NAMESPACE, newIdentity } from './watch-fixture.js';

// What the BUILT npm bundle loads for a command: each command loads only what it runs (docs/architecture.md,
// "Start-up and memory"). Recorded from inside the process with module.registerHooks, written when it exits: the
// files of dist/ node loads, and the built-in modules that code of dist/ asks for, by their public names
// (node:tls…) and how (require or import). Nothing here depends on Node's internal module names: what
// node loads on its own behind a built-in is its business; what our code asks for is ours.

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const RECORDER = `
const { registerHooks } = require('node:module');
const { writeFileSync } = require('node:fs');
const files = new Set();
const builtins = [];
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    if (resolved.url.startsWith('node:')) builtins.push({ name: resolved.url.slice('node:'.length), parent: context.parentURL ?? '', how: context.conditions?.includes('import') ? 'import' : 'require' });
    return resolved;
  },
  load(url, context, next) { files.add(url); return next(url, context); },
});
process.on('exit', () => writeFileSync(process.env.PAR_TEST_LOADED, JSON.stringify({ files: [...files], builtins })));
`;

/** The one built-in the bundle imports: node:module, for the createRequire() every other built-in goes through (scripts/bundle-options.mjs). */
const IMPORTED = ['module'];

interface Loaded {
  /** Files of dist/ the process loaded, hashes cut: par-identity.js, yaml.js, client-node.js… */
  dist: string[];
  /** Built-in modules code of dist/ asked for (tls, https…). */
  builtins: string[];
  /** Those it asked for with import: node builds a built-in's ES module by running all its lazy getters. */
  imported: string[];
}

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'par-lazy-'));
  await writeFile(join(work, 'recorder.cjs'), RECORDER);
});
afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

async function loadedBy(output: string): Promise<Loaded> {
  const { files, builtins } = JSON.parse(await readFile(output, 'utf8')) as {
    files: string[];
    builtins: { name: string; parent: string; how: string }[];
  };
  const inDist = (url: string) => url.startsWith('file://') && fileURLToPath(url).startsWith(DIST);
  const dist = files
    .filter(inDist)
    .map((url) => basename(fileURLToPath(url)).replace(/-[A-Z0-9]{8}\.js$/, '.js'))
    .sort();
  const ours = builtins.filter((b) => inDist(b.parent));
  return {
    dist,
    builtins: [...new Set(ours.map((b) => b.name))].sort(),
    imported: [...new Set(ours.filter((b) => b.how === 'import').map((b) => b.name))],
  };
}

/** Runs the built bin with the recorder; resolves once it exited. */
async function record(args: string[], env: Record<string, string>): Promise<Loaded> {
  const output = join(work, `loaded-${Date.now()}.json`);
  const child = spawn(process.execPath, ['--require', join(work, 'recorder.cjs'), BIN, ...args], {
    env: cleanEnv({ ...env, PAR_TEST_LOADED: output, HOME: work }),
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, stderr).toBe(0);
  return loadedBy(output);
}

describe('what a command loads', () => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await localFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('--help: the launcher prints the stored help text, the bundle is never loaded', async () => {
    const loaded = await record(['--help'], fx.env);
    expect(loaded.dist).toEqual(['help.js']);
    expect(loaded.builtins).toEqual([]);
  });

  it('--help on the full path (PAR_IDENTITY_NO_FAST_HELP): the product module only, no crypto, built-ins taken with require()', async () => {
    const loaded = await record(['--help'], { ...fx.env, PAR_IDENTITY_NO_FAST_HELP: '1' });
    expect(loaded.dist).toEqual(['par-identity.js']);
    // The recorder does see what the product asks for (a control: --help prints through node:process).
    expect(loaded.builtins).toContain('fs');
    expect(loaded.builtins).not.toContain('crypto');
    expect(loaded.imported).toEqual(IMPORTED);
  });

  it('rotate-identity on a local file, plain-http endpoint: no YAML library for a plain config, no Kubernetes client, no TLS', async () => {
    const loaded = await record(['rotate-identity', '-c', fx.dir], fx.env);
    expect(loaded.dist).toEqual(['par-identity.js']);
    expect(loaded.builtins).toContain('http');
    for (const builtin of ['tls', 'https', 'http2', 'readline', 'zlib', 'worker_threads'])
      expect(loaded.builtins, builtin).not.toContain(builtin);
    expect(loaded.imported).toEqual(IMPORTED);
  });

  it('rotate-identity with a config outside the one-pass reader (an anchor): the YAML library, still nothing else', async () => {
    const config = join(fx.dir, 'datadog.yaml');
    await writeFile(config, `${await readFile(config, 'utf8')}\nanchored: &a value\naliased: *a\n`);
    const loaded = await record(['rotate-identity', '-c', fx.dir], fx.env);
    expect(loaded.dist).toEqual(['par-identity.js', 'yaml.js']);
    expect(loaded.builtins).not.toContain('tls');
    expect(loaded.imported).toEqual(IMPORTED);
  });
});

describe('what watch loads', () => {
  let kube: KubeFixture;
  beforeEach(async () => {
    kube = await kubeFixture();
  });
  afterEach(async () => {
    await kube.close();
  });

  it('follows the Secret without the Kubernetes API classes (list and watch through the transport)', async () => {
    kube.create(identityData(newIdentity()));
    await writeFile(join(work, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
    const kubeconfig = join(work, 'kubeconfig');
    await kube.emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
    const output = join(work, 'loaded-watch.json');
    // As the sidecar runs it, inside the Pod: off-cluster without --secret-name and -n, watch would first
    // find the cluster agent and read its Deployment with the API classes (docs/commands.md, watch).
    const sa = join(work, 'podroot/var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'namespace'), NAMESPACE);
    const child = spawn(
      process.execPath,
      ['--require', join(work, 'recorder.cjs'), BIN, 'watch', '-c', work, '--kubeconfig', kubeconfig, '--json'],
      {
        env: cleanEnv({ PAR_TEST_LOADED: output, HOME: work, PAR_IDENTITY_SA_ROOT: join(work, 'podroot') }),
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if ((JSON.parse(line) as { event?: string }).event === 'loaded') resolve();
      });
      void exited.then((code) => reject(new Error(`watch exited early (${code})`)));
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const loaded = await loadedBy(output);
    // The kubeconfig is read with the yaml library (YAML 1.1, as kubectl reads it); the Kubernetes API
    // classes stay on disk (the list and watch go through the transport alone), and the plain agent
    // config needs no YAML library.
    expect(loaded.dist).toEqual(['par-identity.js', 'yaml.js']);
    expect(loaded.builtins).toContain('https');
    for (const builtin of ['http2', 'readline', 'zlib', 'worker_threads']) expect(loaded.builtins, builtin).not.toContain(builtin);
    expect(loaded.imported).toEqual(IMPORTED);
  });
});
