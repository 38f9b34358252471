import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { flagNames, helpLines, textFlag } from '../../src/cli/flag.js';
import type { CommandSpec, ProgramSpec } from '../../src/cli/spec.js';
import { PROGRAM } from '../../src/cli/table.js';
import { renderCompletion } from '../../src/cli/docs/completion.js';
import { renderManPage } from '../../src/cli/docs/man-page.js';
import type { Io } from '../../src/io.js';

// The command table is the one source: these tests parse argv through the commander program built
// from it, with every command module replaced by a recorder of the options object it would get.

function fakeIo(): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: {},
    now: () => new Date(0),
    isTTY: false,
    stdinIsTTY: false,
    readStdin: async () => '',
    promptHidden: async () => '',
  };
}

const MODULE_NAMES = [
  'rotate-identity',
  'rotate-par-identity',
  'status',
  'rollback',
  'credentials',
  'rollout',
  'completion',
  'emulator',
  'watch',
];
let modules: Map<string, unknown> | undefined;
async function commandModules(): Promise<Map<string, unknown>> {
  modules ??= new Map(
    await Promise.all(MODULE_NAMES.map(async (n) => [`${n}.js`, await import(`../../src/commands/${n}.ts`)] as [string, unknown])),
  );
  return modules;
}

/** Parses argv and returns [module chosen, options object] the command would have been run with. */
async function optionsFor(argv: string[]): Promise<[string, Record<string, unknown>]> {
  let seen: [string, Record<string, unknown>] | undefined;
  const recording: ProgramSpec = {
    ...PROGRAM,
    commands: PROGRAM.commands.map(
      (spec): CommandSpec => ({
        ...spec,
        run: {
          toOptions: spec.run.toOptions,
          load: async (raw) => {
            // The module the real loader imports, recognised by identity.
            const real = await spec.run.load(raw);
            const which = [...(await commandModules()).entries()].find(([, mod]) => mod === real)?.[0] ?? 'unknown';
            return {
              run: async (options: Record<string, unknown>) => {
                // The CLI boundary adds its SIGINT/SIGTERM signal to the pipeline commands; the table does not.
                const { signal, ...fromTable } = options;
                if (signal !== undefined) expect(signal).toBeInstanceOf(AbortSignal);
                seen = [which, fromTable];
                return { json: { schemaVersion: 1 as const, status: 'ok' as const, command: spec.name }, summary: [] };
              },
            };
          },
        },
      }),
    ),
  };
  const io = fakeIo();
  process.exitCode = undefined;
  await buildProgram(recording, io).parseAsync(['node', 'par-identity', ...argv]);
  expect(process.exitCode, io.err.join('')).toBeUndefined();
  expect(seen, argv.join(' ')).toBeDefined();
  return seen!;
}

describe('options objects handed to the command modules (unchanged by the table)', () => {
  it.each<[string[], string, Record<string, unknown>]>([
    [
      ['rotate-identity'],
      'rotate-identity.js',
      {
        cfgPath: '/etc/datadog-agent',
        extraCfg: [],
        cfgPathGiven: false,
        json: false,
        color: false,
        profile: 'default',
        fallback: false,
        rolloutTimeoutSeconds: 600,
        keepPrevious: true,
        timeoutSeconds: 120,
        dryRun: false,
        verify: true,
      },
    ],
    [
      [
        'rotate-identity',
        '--k8s-secret',
        'runner',
        '-n',
        'ns',
        '--timeout',
        '2m',
        '--no-verify',
        '--rollout',
        'deployment/x',
        '--rollout-timeout',
        '1h',
        '--api-key-file',
        '-',
      ],
      'rotate-identity.js',
      {
        cfgPath: '/etc/datadog-agent',
        extraCfg: [],
        cfgPathGiven: false,
        json: false,
        color: false,
        apiKeyFile: '-',
        profile: 'default',
        namespace: 'ns',
        rollout: 'deployment/x',
        fallback: false,
        rolloutTimeoutSeconds: 3600,
        k8sSecret: 'runner',
        keepPrevious: true,
        timeoutSeconds: 120,
        dryRun: false,
        verify: false,
      },
    ],
    [
      [
        'rotate-par-identity',
        '-E',
        'a.yaml',
        '-E',
        'b.yaml',
        '--context',
        'prod',
        '--secret-name',
        's',
        '--no-keep-previous',
        '--json',
        '--if-older-than',
        '90d',
        '--wait-lock',
        '1m',
        '--no-connections',
        '--agent-version',
        '7.66.0',
      ],
      'rotate-par-identity.js',
      {
        cfgPath: '/etc/datadog-agent',
        extraCfg: ['a.yaml', 'b.yaml'],
        cfgPathGiven: false,
        context: 'prod',
        secretName: 's',
        profile: 'default',
        json: true,
        color: false,
        fallback: false,
        rolloutTimeoutSeconds: 600,
        timeoutSeconds: 120,
        dryRun: false,
        verify: true,
        keepPrevious: false,
        ifOlderThanSeconds: 90 * 86_400,
        waitLockSeconds: 60,
        connections: false,
        agentVersion: '7.66.0',
      },
    ],
    [
      ['status', '--verify', '--timeout', '1500ms'],
      'status.js',
      {
        secret: false,
        cfgPath: '/etc/datadog-agent',
        extraCfg: [],
        cfgPathGiven: false,
        json: false,
        color: false,
        verify: true,
        profile: 'default',
        timeoutSeconds: 1.5,
      },
    ],
    [
      ['status', '--secret', '-n', 'datadog'],
      'status.js',
      {
        secret: true,
        cfgPath: '/etc/datadog-agent',
        extraCfg: [],
        cfgPathGiven: false,
        namespace: 'datadog',
        json: false,
        color: false,
        verify: false,
        profile: 'default',
        timeoutSeconds: 30,
      },
    ],
    [
      ['status', '-A', '--hostname', 'h1'],
      'status.js',
      {
        secret: false,
        allNamespaces: true,
        hostname: 'h1',
        cfgPath: '/etc/datadog-agent',
        extraCfg: [],
        cfgPathGiven: false,
        json: false,
        color: false,
        verify: false,
        profile: 'default',
        timeoutSeconds: 30,
      },
    ],
    [
      ['status', '--k8s-secret', 'r', '--pods', 'deployment/par'],
      'status.js',
      {
        secret: false,
        k8sSecret: 'r',
        pods: 'deployment/par',
        cfgPath: '/etc/datadog-agent',
        extraCfg: [],
        cfgPathGiven: false,
        json: false,
        color: false,
        verify: false,
        profile: 'default',
        timeoutSeconds: 30,
      },
    ],
    [
      ['rollback', '--identity-file', '/x/id.json', '--wait-lock', '30s'],
      'rollback.js',
      {
        secret: false,
        waitLockSeconds: 30,
        cfgPath: '/etc/datadog-agent',
        extraCfg: [],
        cfgPathGiven: false,
        identityFile: '/x/id.json',
        json: false,
        color: false,
        verify: true,
        profile: 'default',
        timeoutSeconds: 30,
        dryRun: false,
      },
    ],
    [
      ['rollback', '--secret', '--no-verify', '--dry-run'],
      'rollback.js',
      {
        secret: true,
        cfgPath: '/etc/datadog-agent',
        extraCfg: [],
        cfgPathGiven: false,
        json: false,
        color: false,
        verify: false,
        profile: 'default',
        timeoutSeconds: 30,
        dryRun: true,
      },
    ],
    [
      ['credentials', 'show', '--profile', 'p'],
      'credentials.js',
      { json: false, color: false, action: 'show', profile: 'p', cfgPath: '/etc/datadog-agent', extraCfg: [], cfgPathGiven: false },
    ],
    [
      ['rollout', 'ds/par', '-n', 'ns', '--check'],
      'rollout.js',
      {
        json: false,
        color: false,
        target: 'ds/par',
        namespace: 'ns',
        checkOnly: true,
        surge: 'auto',
        fallback: false,
        timeoutSeconds: 600,
        pollMs: 1000,
        dryRun: false,
      },
    ],
    [
      ['rollout', 'deployment/x', '--surge', '--poll-interval', '2s'],
      'rollout.js',
      {
        json: false,
        color: false,
        target: 'deployment/x',
        checkOnly: false,
        surge: true,
        fallback: false,
        timeoutSeconds: 600,
        pollMs: 2000,
        dryRun: false,
      },
    ],
    [
      ['rollout', 'deployment/x', '--no-surge'],
      'rollout.js',
      {
        json: false,
        color: false,
        target: 'deployment/x',
        checkOnly: false,
        surge: false,
        fallback: false,
        timeoutSeconds: 600,
        pollMs: 1000,
        dryRun: false,
      },
    ],
    [['emulator', '--kube', '--kube-port', '3'], 'emulator.js', { json: false, color: false, port: 0, kube: true, kubePort: 3 }],
    [
      [
        'watch',
        '--output',
        '/o',
        '--signal',
        '42',
        '--on-change',
        'signal',
        '--splay',
        '2s',
        '--relist-interval',
        '5m',
        '--healthz-stale',
        '90s',
        '--',
        'runner',
        '-x',
      ],
      'watch.js',
      {
        cfgPath: '/etc/datadog-agent',
        extraCfg: [],
        cfgPathGiven: false,
        json: false,
        color: false,
        output: '/o',
        signalPid: 42,
        signalName: 'HUP',
        command: ['runner', '-x'],
        onChange: 'signal',
        killTimeoutSeconds: 10,
        splayMs: 2000,
        relistIntervalSeconds: 300,
        healthzStaleSeconds: 90,
      },
    ],
  ])('%j → %s', async (argv, module, options) => {
    const [chosen, got] = await optionsFor(argv);
    expect(chosen).toBe(module);
    expect(got).toEqual(options);
  });

  it('completion gets the script rendered from the table itself', async () => {
    const [chosen, got] = await optionsFor(['completion', 'bash']);
    expect(chosen).toBe('completion.js');
    const { shell, script } = got as { shell: string; script(shell: string): Promise<string | undefined> };
    expect(shell).toBe('bash');
    expect(await script('bash')).toBe(renderCompletion(PROGRAM, 'bash'));
    expect(await script('tcsh')).toBeUndefined();
  });
});

describe('every command in the table', () => {
  it.each(PROGRAM.commands.map((c) => [c.name, c] as const))('%s has 1–3 examples that use only its own flags', (name, spec) => {
    expect(spec.examples.length).toBeGreaterThanOrEqual(1);
    expect(spec.examples.length).toBeLessThanOrEqual(3);
    const known = new Set([...Object.values(spec.flags).flatMap(flagNames), '-h', '--help']);
    for (const example of spec.examples) {
      // The par-identity invocations in the example (a pipeline or && chain may hold others).
      const runs = example.command.match(new RegExp(`par-identity ${name}\\b[^|&)]*`, 'g')) ?? [];
      expect(runs.length, example.command).toBeGreaterThan(0);
      for (const run of runs) {
        const ours = run.split(' -- ')[0]!;
        for (const token of ours
          .trim()
          .split(/\s+/)
          .filter((t) => t.startsWith('-') && t !== '-'))
          expect(known, `${example.command}: ${token}`).toContain(token.split('=')[0]);
      }
    }
  });

  it('the man page and the completion come from the table: every flag and example is in them', () => {
    const man = renderManPage(PROGRAM, '0.0.0').replace(/\\-/g, '-');
    const bash = renderCompletion(PROGRAM, 'bash')!;
    for (const spec of PROGRAM.commands) {
      expect(man).toContain(`.SS ${spec.name}`);
      for (const flag of Object.values(spec.flags)) {
        for (const line of helpLines(flag)) expect(man).toContain(line.syntax);
        for (const name of flagNames(flag)) expect(bash).toContain(name);
      }
      for (const example of spec.examples) expect(man).toContain(example.command);
    }
  });

  it('a flag added to the table reaches --help, the man page and the completion', async () => {
    const extra: ProgramSpec = {
      ...PROGRAM,
      commands: PROGRAM.commands.map((c) =>
        c.name === 'status' ? { ...c, flags: { ...c.flags, brandNew: textFlag('--brand-new', 'x', 'a new flag') } } : c,
      ),
    };
    const io = fakeIo();
    const program = buildProgram(extra, io);
    await program.parseAsync(['node', 'par-identity', 'status', '--help']).catch(() => undefined);
    expect(io.out.join('')).toContain('--brand-new <x>');
    expect(renderManPage(extra, '0').replace(/\\-/g, '-')).toContain('--brand-new <x>');
    expect(renderCompletion(extra, 'fish')).toContain('-l brand-new');
  });
});
