import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_DOCS } from '../../src/errors.js';
import { runCli } from './run-cli.js';

const COMMANDS = [
  'rotate-identity',
  'rotate-par-identity',
  'status',
  'rollback',
  'rollout',
  'watch',
  'credentials',
  'completion',
  'emulator',
];

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
    const run = spawnSync('groff', ['-ww', '-man', '-Tutf8', 'man/par-identity.1'], {
      encoding: 'utf8',
      cwd: new URL('../..', import.meta.url).pathname,
    });
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
  // The bash script run as bash runs it on Tab: COMP_WORDS set, the function called, COMPREPLY printed;
  // in `cwd`, with the built par-identity first on PATH (the script asks it for contexts and namespaces).
  async function complete(words: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<string[]> {
    const script = (await runCli(['completion', 'bash'])).stdout;
    const { spawnSync } = await import('node:child_process');
    const line = `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _par_identity; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const bin = new URL('../../dist/bin', import.meta.url).pathname;
    const env = { ...process.env, PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`, ...options.env };
    const run = spawnSync('bash', ['-c', `${script}\n${line}`], { encoding: 'utf8', env, ...(options.cwd ? { cwd: options.cwd } : {}) });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout.trim().split('\n').filter(Boolean).sort();
  }

  it('bash completes commands and each command’s flags', async () => {
    expect(await complete(['par-identity', 'rot'])).toEqual(['rotate-identity', 'rotate-par-identity']);
    expect(await complete(['par-identity', 'rotate-identity', '--dr'])).toEqual(['--dry-run']);
    expect(await complete(['par-identity', 'rotate-par-identity', '--no-k'])).toEqual(['--no-keep-previous']);
  });

  it('bash completes the values: files after -c and --kubeconfig, the choices of credentials and completion, nothing after --timeout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'par-complete-'));
    try {
      await writeFile(join(dir, 'datadog.yaml'), '');
      await writeFile(join(dir, 'dev.kubeconfig'), '');
      expect(await complete(['par-identity', 'status', '-c', 'da'], { cwd: dir })).toEqual(['datadog.yaml']);
      expect(await complete(['par-identity', 'rotate-par-identity', '--kubeconfig', 'de'], { cwd: dir })).toEqual(['dev.kubeconfig']);
      expect(await complete(['par-identity', 'credentials', ''])).toEqual(['delete', 'set', 'show']);
      expect(await complete(['par-identity', 'completion', ''])).toEqual(['bash', 'contexts', 'fish', 'namespaces', 'zsh']);
      expect(await complete(['par-identity', 'rotate-identity', '--timeout', ''])).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('bash completes --context and -n from the kubeconfig (KUBECONFIG, or the --kubeconfig of the line)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'par-complete-kube-'));
    try {
      const kubeconfig = (contexts: [string, string][]) =>
        `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts:\n${contexts.map(([name, ns]) => `- {name: ${name}, context: {cluster: c, user: u, namespace: ${ns}}}\n`).join('')}current-context: ${contexts[0]![0]}\n`;
      await writeFile(
        join(dir, 'main'),
        kubeconfig([
          ['prod', 'datadog'],
          ['staging', 'datadog-staging'],
        ]),
      );
      await writeFile(join(dir, 'other'), kubeconfig([['lab', 'runners']]));
      const env = { KUBECONFIG: join(dir, 'main'), HOME: dir };
      expect(await complete(['par-identity', 'rotate-par-identity', '--context', ''], { env })).toEqual(['prod', 'staging']);
      expect(await complete(['par-identity', 'status', '-n', 'datadog'], { env })).toEqual(['datadog', 'datadog-staging']);
      expect(await complete(['par-identity', 'rollout', '--kubeconfig', join(dir, 'other'), '--context', ''], { env })).toEqual(['lab']);
      expect(await complete(['par-identity', 'status', '-n', ''], { env: { HOME: dir } })).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each(['zsh', 'fish'])('%s script names every command', async (shell) => {
    const run = await runCli(['completion', shell]);
    expect(run.code).toBe(0);
    for (const cmd of ['rotate-identity', 'rotate-par-identity', 'status', 'rollback', 'credentials', 'emulator'])
      expect(run.stdout).toContain(cmd);
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

// kubectl's habits, as its users type them (issue 32): --dry-run=server|client mean our --dry-run (which
// includes the server-side dry run of the write), --dry-run=none no dry run; any other value a usage
// error naming the forms. The emulator-free runs below stop at the config (exit 3) or at the dry run's
// first check: what matters is that the flag was taken, and in which sense.
describe("kubectl's --dry-run forms", () => {
  it.each([
    ['--dry-run=server', true],
    ['--dry-run=client', true],
    ['--dry-run', true],
  ])('rotate-identity %s is a dry run', async (flag) => {
    const run = await runCli(['rotate-identity', flag, '-c', '/nonexistent-par-dir', '--json']);
    expect(run.stderr).not.toContain('unknown option');
    const doc = JSON.parse(run.stdout) as { code?: string };
    expect(doc.code).not.toBe('USAGE');
  });

  it('--dry-run=none is no dry run, and --dry-run=bogus a usage error naming the forms (one JSON document)', async () => {
    const none = await runCli(['rollback', '--dry-run=none', '-c', '/nonexistent-par-dir', '--json']);
    expect(none.stderr).not.toContain('unknown option');
    expect((JSON.parse(none.stdout) as { code?: string }).code).not.toBe('USAGE');
    const bogus = await runCli(['rotate-identity', '--dry-run=bogus', '--json']);
    expect(bogus.code).toBe(2);
    const doc = JSON.parse(bogus.stdout) as { code: string; message: string; hint: string };
    expect(doc.code).toBe('USAGE');
    expect(doc.message).toContain('--dry-run=bogus');
    expect(doc.hint).toContain('--dry-run=server');
  });

  it('a bare par-identity prints the program help on stdout and exits 0 (both paths)', async () => {
    for (const env of [{}, { PAR_IDENTITY_NO_FAST_HELP: '1' }]) {
      const run = await runCli([], { env });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage: par-identity /);
      expect(run.stderr).toBe('');
    }
  });
});
