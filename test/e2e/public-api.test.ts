import { execFileSync, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY, type EnrollmentEmulator, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import { IDENTITY, secretsIn } from './local-fixture.js';
import { cleanEnv } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import { identityData, type KubeFixture, kubeFixture, NAMESPACE, newIdentity, SECRET, secretData } from './watch-fixture.js';

// The programmatic API as a user gets it: `npm pack`, the tarball installed into a fresh project
// with no network, then (a) a TypeScript file that imports it type-checked with this repository's
// tsc (wrong options must not compile), and (b) a JavaScript file that imports it by name and calls
// rotateIdentity and status against the enrollment emulator and watchIdentity against the
// Kubernetes emulator. Paths come from import.meta.url and tmpdir(); nothing waits a fixed time.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = join(ROOT, 'test', 'fixtures', 'public-api');
const SLOW = 180_000;

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/**
 * A package-lock for a project that depends on the tarball only: its entry, plus this repository's
 * own lock entries for the package's runtime dependencies (and theirs). `npm ci --offline` then
 * takes each of them from the npm cache that `npm ci` of this repository filled, exactly as locked,
 * without asking the registry for anything (`npm install <tgz> --offline` would want the full
 * registry metadata of each dependency, which `npm ci` does not cache).
 */
async function offlineLock(tarball: string): Promise<{ manifest: object; lock: object }> {
  const repoLock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
  const spec = `file:../${tarball}`;
  const packages: Record<string, unknown> = {
    '': { name: 'par-identity-api-user', dependencies: { 'par-identity': spec } },
    'node_modules/par-identity': { version: pkg.version, resolved: spec, dependencies: pkg.dependencies },
  };
  const add = (name: string) => {
    const key = `node_modules/${name}`;
    if (packages[key]) return;
    const entry = repoLock.packages[key];
    if (!entry) throw new Error(`package-lock.json has no hoisted entry for ${name}`);
    packages[key] = entry;
    for (const dep of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) add(dep);
  };
  for (const dep of Object.keys(pkg.dependencies)) add(dep);
  return {
    manifest: { name: 'par-identity-api-user', private: true, type: 'module', dependencies: { 'par-identity': spec } },
    lock: { name: 'par-identity-api-user', lockfileVersion: 3, requires: true, packages },
  };
}

let work: string;
let project: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'par-public-api-'));
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' }),
  ) as { filename: string }[];
  project = join(work, 'project');
  await mkdir(project);
  const { manifest, lock } = await offlineLock(packed!.filename);
  await writeFile(join(project, 'package.json'), JSON.stringify(manifest, null, 2));
  await writeFile(join(project, 'package-lock.json'), JSON.stringify(lock, null, 2));
  try {
    execFileSync('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: project,
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
  } catch (err) {
    throw new Error(
      `offline install of the tarball failed; its dependencies come from the npm cache that \`npm ci\` of this repository fills (run it with the same npm cache first):\n${(err as { stderr?: string }).stderr ?? err}`,
    );
  }
}, SLOW);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the packed package, installed offline in a new project', () => {
  it(
    'type-checks a TypeScript user of all four functions and the error classes; wrong options do not compile',
    async () => {
      await copyFile(join(FIXTURES, 'check-types.ts'), join(project, 'check-types.ts'));
      const tsconfig = {
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2023', 'esnext.disposable'],
          strict: true,
          noEmit: true,
          // The shipped declarations are checked too, not skipped.
          skipLibCheck: false,
          // A Node project has @types/node; this one borrows the repository's (the install is offline).
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          types: ['node'],
        },
        files: ['check-types.ts'],
      };
      await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      let output = '';
      try {
        execFileSync(process.execPath, [tsc, '-p', project], { cwd: project, encoding: 'utf8' });
      } catch (err) {
        output = `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`;
      }
      // Every @ts-expect-error line must fail (an unused one is itself an error), and nothing else may.
      expect(output).toBe('');
    },
    SLOW,
  );

  describe('a JavaScript user against the emulators', () => {
    let enrollment: EnrollmentEmulator;
    let kube: KubeFixture;
    let lines: Array<Record<string, unknown>>;
    let stderr: string;
    let exit: { code: number | null; signal: NodeJS.Signals | null };
    let identityText: string;
    const first = newIdentity();
    const next = newIdentity();
    // biome-ignore lint/suspicious/noExplicitAny: the script's JSON lines, checked field by field below.
    const step = (name: string): Record<string, any> => {
      const found = lines.find((l) => l.step === name);
      if (!found) throw new Error(`no "${name}" line; got ${lines.map((l) => l.step).join(', ')}; stderr: ${stderr}`);
      return found;
    };

    beforeAll(async () => {
      enrollment = await startEnrollmentEmulator();
      kube = await kubeFixture();
      const cfgDir = join(work, 'agent');
      const clusterCfgDir = join(work, 'cluster-agent');
      await mkdir(cfgDir);
      await mkdir(clusterCfgDir);
      // No api_key/app_key in the config, none in the environment: the script passes them as values.
      await writeFile(
        join(cfgDir, 'datadog.yaml'),
        [`dd_url: ${enrollment.url}`, 'hostname: e2e-host', 'private_action_runner:', '  enabled: true', ''].join('\n'),
      );
      await writeFile(join(clusterCfgDir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
      const kubeconfig = join(work, 'kubeconfig');
      await kube.emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
      kube.create(identityData(first));
      await copyFile(join(FIXTURES, 'use-api.mjs'), join(project, 'use-api.mjs'));

      const child = spawn(process.execPath, ['use-api.mjs'], {
        cwd: project,
        env: cleanEnv({
          DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
          PAR_IDENTITY_RETRY_INITIAL_MS: '20',
          PAR_TEST_CFG_DIR: cfgDir,
          PAR_TEST_IDENTITY_FILE: join(cfgDir, IDENTITY),
          PAR_TEST_API_KEY: DEFAULT_API_KEY,
          PAR_TEST_APP_KEY: DEFAULT_APP_KEY,
          PAR_TEST_CLUSTER_CFG_DIR: clusterCfgDir,
          PAR_TEST_KUBECONFIG: kubeconfig,
          PAR_TEST_OUTPUT: join(work, 'watched-identity.json'),
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      lines = [];
      stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      createInterface({ input: child.stdout }).on('line', (line) => {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        lines.push(parsed);
        if (parsed.step === 'watch-ready') {
          // Invalid content first (reported, not applied), then a new identity (applied and written).
          kube.update(secretData({ private_key: 'not-a-key', urn: next.urn }));
          kube.update(identityData(next));
        }
      });
      exit = await new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
      identityText = await readFile(join(cfgDir, IDENTITY), 'utf8');
    }, SLOW);

    afterAll(async () => {
      await enrollment?.close();
      await kube?.close();
    });

    it('ends on its own with status 0 once the watch is stopped, and prints nothing itself', () => {
      expect(exit, stderr).toEqual({ code: 0, signal: null });
      expect(stderr).toBe('');
    });

    it('resolves by package name for import and require, with ./package.json exported', async () => {
      const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
      expect(step('package')).toEqual({
        step: 'package',
        version: pkg.version,
        cjsSameClass: true,
        functions: ['function', 'function', 'function', 'function'],
      });
    });

    it('throws the error family: a missing identity file is a StorageError IDENTITY_MISSING', () => {
      expect(step('status-missing')).toMatchObject({
        threw: true,
        error: {
          isParError: true,
          isStorageError: true,
          name: 'ParError',
          code: 'IDENTITY_MISSING',
          exitCode: 7,
          knownCode: true,
          hint: expect.any(String),
        },
      });
      expect(step('unknown-option').error).toMatchObject({
        isUsageError: true,
        code: 'USAGE',
        message: 'rotateIdentity: unknown option "apikey"',
      });
      expect(step('rotate-aborted').error).toMatchObject({ isInterruptedError: true, code: 'INTERRUPTED' });
      expect(step('watch-aborted').error).toMatchObject({ isInterruptedError: true, code: 'INTERRUPTED' });
    });

    it('rotateIdentity enrolls with the keys given as values and returns the --json result', () => {
      const { result } = step('rotate');
      const stored = JSON.parse(identityText) as { urn: string };
      expect(result).toMatchObject({
        schemaVersion: 1,
        status: 'ok',
        command: 'rotate-identity',
        urn: stored.urn,
        previousUrn: null,
        fingerprint: expect.any(String),
        identityFile: expect.stringMatching(new RegExp(`/${IDENTITY}$`)),
        verify: { performed: true, ok: true },
        rollbackCommand: expect.stringContaining('par-identity rollback'),
      });
      expect(enrollment.runners.map((r) => r.runnerId)).toContain(stored.urn.split(':').at(-1));
      expect(enrollment.runners.map((r) => r.hostname)).toContain('e2e-host');
      expect(step('progress')).toMatchObject({ levels: expect.arrayContaining(['info', 'step']), steps: expect.any(Number) });
      expect(step('progress').steps).toBeGreaterThan(5);
      expect(step('dry-run').result).toMatchObject({
        status: 'ok',
        dryRun: true,
        previousUrn: stored.urn,
        plan: expect.arrayContaining([expect.objectContaining({ step: 'enroll' })]),
      });
    });

    it('status returns what is in the file, verified online', () => {
      const { result } = step('status');
      expect(result).toMatchObject({
        schemaVersion: 1,
        status: 'ok',
        command: 'status',
        target: 'file',
        urn: step('rotate').result.urn,
        fingerprint: step('rotate').result.fingerprint,
        verify: { performed: true, ok: true },
      });
    });

    it('watchIdentity loads the Secret, reports invalid content, applies and writes the rotation, and stops on abort', async () => {
      const ready = step('watch-ready');
      expect(ready).toMatchObject({
        secret: { namespace: NAMESPACE, name: SECRET },
        urn: first.urn,
        fingerprint: first.fingerprint,
        keyType: 'ec',
        keyKind: 'private',
      });
      expect(ready.serialised).not.toContain(first.privateKey);
      const stopped = step('watch-stopped');
      expect(stopped.rotated).toEqual({ fingerprint: next.fingerprint, changed: ['urn', 'private_key'] });
      expect(stopped.current).toBe(next.fingerprint);
      expect(stopped.loaded).toEqual([
        { fingerprint: first.fingerprint, reason: 'initial' },
        { fingerprint: next.fingerprint, reason: 'rotated' },
      ]);
      expect(stopped.errors).toEqual([{ code: 'IDENTITY_INVALID', event: 'rejected', isParError: true }]);
      expect(stopped.written).toEqual([first.fingerprint, next.fingerprint]);
      expect(stopped.seen).toEqual(expect.arrayContaining(['listed', 'loaded', 'written', 'rejected']));
      expect(stopped.metrics).toMatchObject({ reloads: 1, reloadErrors: 1 });
      const summary = {
        secret: { namespace: NAMESPACE, name: SECRET },
        urn: next.urn,
        fingerprint: next.fingerprint,
        reloads: 1,
        reloadErrors: 1,
        watchRestarts: 0,
        stoppedBy: 'abort',
      };
      expect(stopped.summary).toEqual(summary);
      expect(stopped.again).toEqual(summary);
      const output = JSON.parse(await readFile(join(work, 'watched-identity.json'), 'utf8')) as { urn: string; private_key: string };
      expect(output).toEqual({ urn: next.urn, private_key: next.privateKey });
    });

    it('never puts a key in what it returns or reports', () => {
      const text = JSON.stringify(lines);
      for (const secret of [...secretsIn(identityText), first.privateKey, next.privateKey])
        expect(text.includes(secret), `${secret.slice(0, 4)}…`).toBe(false);
    });
  });
});
