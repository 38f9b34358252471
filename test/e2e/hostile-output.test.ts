import { execFileSync } from 'node:child_process';
import { chmod, chown, link, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachLauncher } from './launchers.js';
import { type RunningCli, startCli } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import { eventually, identityData, type KubeFixture, kubeFixture, NAMESPACE, newIdentity } from './watch-fixture.js';

// `watch --output FILE` as an attacker meets it (issue 24, "The new key given to the owner of a
// planted file"): an output file or backup of another user is refused with FILE_OWNER_REFUSED naming
// its owner (the one owner rule, src/storage/file-owner.ts), at start and at every write; what is
// written is a new 0600 file renamed into place, never the old file written into. Owning files as
// uid 65534 needs root; elsewhere those tests are skipped and say so.

const NOBODY = 65534;
const ROOT = process.geteuid?.() === 0;
const AS_ROOT = ROOT ? '' : ' [SKIPPED: needs root to own files as uid 65534]';

let kube: KubeFixture;
let dir: string;
let outDir: string;
let kubeconfig: string;
const started: RunningCli[] = [];

beforeEach(async () => {
  kube = await kubeFixture();
  dir = await mkdtemp(join(tmpdir(), 'par-hostile-output-'));
  outDir = await mkdtemp(join(tmpdir(), 'par-hostile-out-'));
  await writeFile(join(dir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
  kubeconfig = join(dir, 'kubeconfig');
  await kube.emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
});
afterEach(async () => {
  for (const run of started.splice(0)) run.child.kill('SIGKILL');
  await kube.close();
  await rm(dir, { recursive: true, force: true });
  await rm(outDir, { recursive: true, force: true });
});

function lines(run: RunningCli): Array<Record<string, unknown>> {
  return run
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describeEachLauncher('watch --output never hands the key to the owner of a planted file', (launcher) => {
  function watch(output: string): RunningCli {
    const run = startCli(['watch', '-c', dir, '--kubeconfig', kubeconfig, '--output', output, '--json'], {
      env: { PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1' },
      ...launcher.options,
    });
    started.push(run);
    return run;
  }

  for (const planted of ['the output file', 'its backup'] as const) {
    it.runIf(ROOT)(
      `${planted} owned by uid ${NOBODY} at start: FILE_OWNER_REFUSED naming the owner (exit 7), nothing watched, the file untouched${AS_ROOT}`,
      async () => {
        kube.create(identityData(newIdentity()));
        const output = join(outDir, 'identity.json');
        const file = planted === 'the output file' ? output : `${output}.bak`;
        await writeFile(file, 'planted', { mode: 0o644 });
        await chown(file, NOBODY, NOBODY);
        const before = await stat(file);
        const run = watch(output);
        const exit = await run.exit;
        expect(exit.code, run.stderr()).toBe(7);
        expect(JSON.parse(run.stdout().trim().split('\n').at(-1)!)).toMatchObject({ status: 'error', code: 'FILE_OWNER_REFUSED' });
        expect(run.stderr()).toContain(`${file} belongs to uid ${NOBODY}`);
        const after = await stat(file);
        expect([after.uid, after.mode, after.ino, after.mtimeMs]).toEqual([before.uid, before.mode, before.ino, before.mtimeMs]);
        expect(await readFile(file, 'utf8')).toBe('planted');
      },
    );
  }

  it.runIf(ROOT)(
    `a backup planted by uid ${NOBODY} in a sticky 1777 directory while watch runs: the next write is refused (apply-error naming the owner), the planted file keeps its bytes${AS_ROOT}`,
    async () => {
      await chmod(outDir, 0o1777);
      const first = newIdentity();
      kube.create(identityData(first));
      const output = join(outDir, 'identity.json');
      const run = watch(output);
      await eventually(() => expect(lines(run).map((l) => l.event)).toContain('written'), 15_000);
      execFileSync('setpriv', [
        '--reuid',
        String(NOBODY),
        '--regid',
        String(NOBODY),
        '--clear-groups',
        'sh',
        '-c',
        `umask 022; printf planted > '${output}.bak'`,
      ]);
      kube.update(identityData(newIdentity()));
      await eventually(() => expect(lines(run).some((l) => l.event === 'apply-error')).toBe(true), 15_000);
      const error = lines(run).find((l) => l.event === 'apply-error')?.error as { code: string; message: string };
      expect(error.code).toBe('FILE_OWNER_REFUSED');
      expect(error.message).toContain(`${output}.bak belongs to uid ${NOBODY}`);
      expect(await readFile(`${output}.bak`, 'utf8')).toBe('planted');
      expect((await stat(`${output}.bak`)).uid).toBe(NOBODY);
      expect(JSON.parse(await readFile(output, 'utf8'))).toMatchObject({ urn: first.urn });
    },
  );

  it('an existing 0644 output file is replaced by a new 0600 file (temp + rename): another name of the old file keeps the old bytes', async () => {
    const identity = newIdentity();
    kube.create(identityData(identity));
    const output = join(outDir, 'identity.json');
    await writeFile(output, 'old readable content', { mode: 0o644 });
    await link(output, join(outDir, 'other-name'));
    const run = watch(output);
    await eventually(() => expect(lines(run).map((l) => l.event)).toContain('written'), 15_000);
    expect((await stat(output)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(output, 'utf8'))).toMatchObject({ urn: identity.urn });
    expect(await readFile(join(outDir, 'other-name'), 'utf8')).toBe('old readable content');
    expect((await stat(`${output}.bak`)).mode & 0o777).toBe(0o600);
  });
});
