import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_DOCS } from '../../src/errors.js';
import { runCli } from './run-cli.js';

const COMMANDS = ['rotate-identity', 'rotate-par-identity', 'status', 'rollback', 'rollout', 'watch', 'credentials', 'completion', 'emulator'];

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
    expect(flags.length).toBeGreaterThan(0);
    for (const flag of flags) expect(man, flag).toContain(flag);
  });

  it('renders with groff -ww without a single warning', async () => {
    const { spawnSync } = await import('node:child_process');
    const run = spawnSync('groff', ['-ww', '-man', '-Tutf8', 'man/par-identity.1'], { encoding: 'utf8', cwd: new URL('../..', import.meta.url).pathname });
    if (run.error && process.env.CI !== 'true') return void console.warn(`groff not installed: ${run.error.message}`);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.length).toBeGreaterThan(5000);
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
    expect(run.stderr).toContain('--timeout must be a duration with its unit, like 30s');
  });

  it('--version prints the package version', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const run = await runCli(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(pkg.version);
  });
});

describe('shell completion', () => {
  async function complete(words: string[]): Promise<string[]> {
    const script = (await runCli(['completion', 'bash'])).stdout;
    const { spawnSync } = await import('node:child_process');
    const line = `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _par_identity; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const run = spawnSync('bash', ['-c', `${script}\n${line}`], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout.trim().split('\n');
  }

  it('bash completes commands and each command’s flags', async () => {
    expect(await complete(['par-identity', 'rot'])).toEqual(['rotate-identity', 'rotate-par-identity']);
    expect(await complete(['par-identity', 'rotate-identity', '--dr'])).toEqual(['--dry-run']);
    expect(await complete(['par-identity', 'rotate-par-identity', '--no-k'])).toEqual(['--no-keep-previous']);
  });

  it.each(['zsh', 'fish'])('%s script names every command', async (shell) => {
    const run = await runCli(['completion', shell]);
    expect(run.code).toBe(0);
    for (const cmd of ['rotate-identity', 'rotate-par-identity', 'status', 'rollback', 'credentials', 'emulator']) expect(run.stdout).toContain(cmd);
  });

  it('an unknown shell is a usage error', async () => {
    expect((await runCli(['completion', 'tcsh'])).code).toBe(2);
  });
});

describe('CLI conventions (issues 23 and 25)', () => {
  it.each([
    ['--no-color before the command', ['--no-color', 'status', '-c', '/nonexistent-par-dir'], 3],
    ['--json before the command', ['--json', 'status', '-c', '/nonexistent-par-dir'], 3],
  ])('%s is taken, not "unknown option"', async (_name, args, code) => {
    const run = await runCli(args);
    expect(run.code, run.stderr).toBe(code);
    expect(run.stderr).not.toContain('unknown option');
    if (args.includes('--json')) expect(JSON.parse(run.stdout)).toMatchObject({ status: 'error', command: 'status' });
  });

  it.each([
    ['unknown flag', ['rollout', '--json', '--bogus']],
    ['missing argument', ['--json', 'rollout']],
    ['unknown command', ['--json', 'nosuch']],
    ['bad value', ['rotate-identity', '--timeout', 'soon', '--json']],
  ])('--json with a usage error (%s): one JSON document, exit 2, a hint naming the real command', async (_name, args) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    const doc = JSON.parse(run.stdout) as { code: string; hint: string };
    expect(doc.code).toBe('USAGE');
    expect(doc.hint).not.toContain('<command>');
    expect(`${run.stdout}${run.stderr}`).not.toContain('<command>');
  });

  it('-q leaves only the error on stderr', async () => {
    const run = await runCli(['-q', 'status', '-c', '/nonexistent-par-dir']);
    expect(run.code).toBe(3);
    expect(run.stderr).not.toContain('→');
    expect(run.stderr).toContain('error[');
  });
});
