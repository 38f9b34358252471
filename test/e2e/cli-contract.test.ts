import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_DOCS } from '../../src/errors.js';
import { runCli } from './run-cli.js';

const COMMANDS = ['rotate-identity', 'status', 'rollback', 'emulator'];

describe('help output is pinned', () => {
  it.each(['', ...COMMANDS])('par-identity %s --help', async (name) => {
    const cmd = name ? [name] : [];
    const run = await runCli([...cmd, '--help'], { env: { COLUMNS: '100' } });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    await expect(run.stdout).toMatchFileSnapshot(`./__snapshots__/help-${name || 'main'}.txt`);
  });
});

describe('man page is generated from the same definitions as --help', () => {
  it.each(COMMANDS)('man page documents every flag of %s', async (cmd) => {
    const man = (await readFile(new URL('../../man/par-identity.1', import.meta.url), 'utf8')).replace(/\\-/g, '-');
    const help = (await runCli([cmd, '--help'])).stdout;
    expect(man).toContain(`.SS ${cmd}`);
    const flags = [...help.matchAll(/^\s+((?:-\w, )?--[\w-]+)/gm)].map((m) => m[1]!);
    expect(flags.length).toBeGreaterThan(1);
    for (const flag of flags) expect(man, flag).toContain(flag);
  });

  it('man page lists the exit-code table', async () => {
    const man = await readFile(new URL('../../man/par-identity.1', import.meta.url), 'utf8');
    for (const { code } of EXIT_CODE_DOCS) expect(man).toContain(`.B ${code}\n`);
  });
});

describe('usage errors', () => {
  it('unknown command and unknown flag exit 2', async () => {
    const unknownCommand = await runCli(['rotate-everything']);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toContain("unknown command 'rotate-everything'");
    const unknownFlag = await runCli(['status', '--api-key', 'x']);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain("unknown option '--api-key'");
  });

  it('an invalid --timeout exits 2', async () => {
    const run = await runCli(['rotate-identity', '--timeout', 'soon']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--timeout must be a positive number');
  });

  it('--version prints the package version', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const run = await runCli(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(pkg.version);
  });
});
