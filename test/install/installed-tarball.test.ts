import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../emulators/enrollment/index.js';
import { cleanEnv } from '../e2e/run-cli.js';

// `npm run test:install` (CI runs it after `npm test`): the install from a checkout as docs/install.md
// gives it. An UNBUILT clone of this repository's HEAD is packed (`prepack` must build), the tarball
// installed globally into a scratch prefix, and the installed `par-identity` run: --version, then its
// own emulator, a rotation and a status against it. Not part of `npm test`: `npm install -g` of a
// tarball asks the registry for its dependency's metadata (@napi-rs/keyring), which `npm ci` does not
// cache, so this needs the network.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// The Node running the tests first on PATH, so npm, prepack and the installed bin all use it.
const env = cleanEnv({
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
  NO_COLOR: '1',
  DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
});
let work: string;
let bin: string;
let tarball: string;
let entries: string[];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'par-install-'));
  const clone = join(work, 'clone');
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone]);
  if (existsSync(join(clone, 'dist'))) throw new Error('the clone has a dist/: it must be unbuilt');
  // The dependencies `npm ci` installed here: the clone is unbuilt, not uninstalled.
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work, '--loglevel=error'], {
      cwd: clone,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  ) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed!.filename);
  entries = packed!.files.map((f) => f.path);
  const prefix = join(work, 'prefix');
  execFileSync('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
    cwd: work,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  bin = join(prefix, 'bin', 'par-identity');
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const run = (args: string[]) => spawnSync(bin, args, { env, encoding: 'utf8', timeout: 60_000 });

describe('the tarball packed from an unbuilt clone, installed with npm install -g', () => {
  it('carries the built bundles (prepack built them)', () => {
    expect(entries).toEqual(
      expect.arrayContaining([
        'bin/par-identity.js',
        'dist/par-identity.js',
        'dist/api.js',
        'dist/emulators.js',
        'man/par-identity.1',
        'LICENSE',
      ]),
    );
  });

  it('par-identity --version prints the package version and exits 0', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const version = run(['--version']);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
  });

  it('runs its emulator, a rotation and a status against it, each with exit code 0', async () => {
    const emulator = spawn(bin, ['emulator', '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => emulator.once('exit', (code) => resolve(code)));
    try {
      const info = await new Promise<{ enrollmentUrl: string }>((resolve, reject) => {
        createInterface({ input: emulator.stdout }).once('line', (line) => resolve(JSON.parse(line)));
        emulator.once('exit', (code) => reject(new Error(`the installed emulator exited early (${code})`)));
      });
      const config = join(work, 'agent');
      execFileSync('mkdir', ['-p', config]);
      await writeFile(
        join(config, 'datadog.yaml'),
        [
          `api_key: ${DEFAULT_API_KEY}`,
          `app_key: ${DEFAULT_APP_KEY}`,
          `dd_url: ${info.enrollmentUrl}`,
          'hostname: install-test',
          'private_action_runner:',
          '  enabled: true',
          '',
        ].join('\n'),
      );
      const rotate = run(['rotate-identity', '-c', config, '--json']);
      expect(rotate.status, rotate.stderr).toBe(0);
      const status = run(['status', '-c', config, '--json']);
      expect(status.status, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ status: 'ok', command: 'status', urn: JSON.parse(rotate.stdout).urn });
    } finally {
      emulator.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
