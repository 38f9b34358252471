import { execFileSync } from 'node:child_process';
import { lstat, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOBODY, ROOT, ROOT_ONLY } from './attacker.js';
import { type RunningCli, runCli, startCli } from './run-cli.js';

// `par-identity emulator` as another local user meets it (issue 24): `--kubeconfig-out PATH` writes an
// admin bearer token ("Files written through links"), never through a link someone planted at PATH,
// never into an existing readable file; and its request log, which any local user can read over
// loopback ("Keys in the emulator's request log"), shows the keys and the runner's signed token only
// masked. The built binary only: the single executable carries no emulator.

let dir: string;
let run: RunningCli | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-hostile-kubeconfig-'));
});
afterEach(async () => {
  run?.child.kill('SIGKILL');
  run = undefined;
  await rm(dir, { recursive: true, force: true });
});

function emulator(path: string): RunningCli {
  run = startCli(['emulator', '--kube', '--kubeconfig-out', path, '--json']);
  return run;
}

/** The first JSON line on stdout: `listening`, or the error document of a run that stops. */
function firstLine(cli: RunningCli): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const check = () => {
      const out = cli.stdout();
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as Record<string, unknown>);
    };
    cli.child.stdout.on('data', check);
    check();
  });
}

describe('emulator --kubeconfig-out', () => {
  it('a symbolic link at PATH: refused with SYMLINK_REFUSED (exit 7), the link and its target untouched', async () => {
    const target = join(dir, 'victim');
    await writeFile(target, 'victim content', { mode: 0o644 });
    const path = join(dir, 'kubeconfig');
    await symlink(target, path);
    const before = await stat(target);
    const cli = emulator(path);
    const exit = await cli.exit;
    expect(exit.code, cli.stderr()).toBe(7);
    expect(JSON.parse(cli.stdout())).toMatchObject({ status: 'error', code: 'SYMLINK_REFUSED', exitCode: 7 });
    expect(cli.stderr()).toContain('error[SYMLINK_REFUSED]');
    expect(cli.stderr()).toContain(`${path} is a symbolic link to ${target}`);
    expect(await readFile(target, 'utf8')).toBe('victim content');
    const after = await stat(target);
    expect([after.mode, after.uid, after.mtimeMs]).toEqual([before.mode, before.uid, before.mtimeMs]);
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
  });

  it('an existing 0644 file at PATH: replaced by a 0600 file holding the kubeconfig; a second name of the old file keeps the old bytes', async () => {
    const path = join(dir, 'kubeconfig');
    await writeFile(path, 'old readable content', { mode: 0o644 });
    const other = join(dir, 'hard-link');
    await import('node:fs/promises').then((fs) => fs.link(path, other));
    const cli = emulator(path);
    expect(await firstLine(cli), cli.stderr()).toMatchObject({ status: 'listening', kubeconfig: path });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readFile(path, 'utf8')).toContain('token:');
    // Written into the old inode, the token would be readable through every other name of it.
    expect(await readFile(other, 'utf8')).toBe('old readable content');
  });
});

describe('the emulator request log, read by another local user', () => {
  it.runIf(ROOT)(
    `uid ${NOBODY} reads GET /__emulator/requests after a rotation with a health check: the API key, application key and the runner's signed token appear only masked${ROOT_ONLY}`,
    async () => {
      const cli = startCli(['emulator', '--json']);
      run = cli;
      const listening = await firstLine(cli);
      expect(listening, cli.stderr()).toMatchObject({ status: 'listening' });
      const lab = listening.lab as { config: string; env: Record<string, string> };
      const rotate = await runCli(['rotate-identity', '-c', lab.config], { env: lab.env });
      expect(rotate.code, rotate.stderr).toBe(0);
      const config = await readFile(lab.config, 'utf8');
      const apiKey = /^api_key: (\S+)$/m.exec(config)![1]!;
      const appKey = /^app_key: (\S+)$/m.exec(config)![1]!;

      const log = execFileSync(
        'setpriv',
        [
          '--reuid',
          String(NOBODY),
          '--regid',
          String(NOBODY),
          '--clear-groups',
          'curl',
          '-sf',
          `${listening.enrollmentUrl}/__emulator/requests`,
        ],
        { encoding: 'utf8' },
      );
      const requests = JSON.parse(log) as Array<{ route: string; headers: Record<string, string> }>;
      expect(requests.map((r) => r.route)).toEqual(expect.arrayContaining(['enroll', 'health']));
      for (const secret of [apiKey, appKey]) expect(log).not.toContain(secret);
      const health = requests.find((r) => r.route === 'health')!;
      // A signed JWT: three base64url parts. Masked, only its last four characters remain.
      expect(health.headers['x-datadog-onprem-jwt']).toMatch(/^….{4}$/);
      expect(log).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/);
      const enroll = requests.find((r) => r.route === 'enroll')!;
      expect([enroll.headers['dd-api-key'], enroll.headers['dd-application-key']]).toEqual([
        `…${apiKey.slice(-4)}`,
        `…${appKey.slice(-4)}`,
      ]);
    },
  );
});
