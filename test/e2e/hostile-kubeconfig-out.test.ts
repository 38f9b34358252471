import { lstat, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningCli, startCli } from './run-cli.js';

// `emulator --kubeconfig-out PATH` writes an admin bearer token (issue 24, "Files written through
// links"): never through a link someone planted at PATH, never into an existing readable file.
// The BUILT binary.

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
