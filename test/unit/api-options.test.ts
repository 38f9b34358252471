import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rotateIdentity, rotateParIdentity, status } from '../../src/api.js';
import { apiIo, checkOptions, SCHEMAS } from '../../src/api/options.js';
import type { RotateIdentityOptions, RotateParIdentityOptions, StatusOptions, WatchIdentityOptions } from '../../src/api/types.js';
import { buildProgram } from '../../src/cli/program.js';
import { PROGRAM } from '../../src/cli/table.js';
import type { Io } from '../../src/io.js';
import { createReporter } from '../../src/output.js';

// The API and the CLI hand the same command modules the same options: the command modules are
// replaced by recorders, then the same request goes through the API and through commander.

const seen = vi.hoisted(() => [] as { module: string; options: Record<string, unknown> }[]);
const recorder = (module: string) => ({
  run: async (options: Record<string, unknown>) => {
    seen.push({ module, options });
    return {
      json: { schemaVersion: 1, status: 'ok', command: module, answer: 42, when: new Date(0), nothing: undefined },
      summary: ['not printed by the API'],
    };
  },
});
vi.mock('../../src/commands/rotate-identity.js', () => recorder('rotate-identity'));
vi.mock('../../src/commands/rotate-par-identity.js', () => recorder('rotate-par-identity'));
vi.mock('../../src/commands/status.js', () => recorder('status'));

afterEach(() => {
  seen.splice(0);
});

function io(): Io {
  return {
    stdout: () => undefined,
    stderr: () => undefined,
    env: {},
    now: () => new Date(0),
    isTTY: false,
    stdinIsTTY: false,
    readStdin: async () => '',
    promptHidden: async () => '',
  };
}

async function viaCli(argv: string[]): Promise<{ module: string; options: Record<string, unknown> }> {
  seen.splice(0);
  process.exitCode = undefined;
  await buildProgram(PROGRAM, io()).parseAsync(['node', 'par-identity', ...argv]);
  expect(process.exitCode).toBeUndefined();
  return seen.pop()!;
}

async function viaApi(call: () => Promise<unknown>): Promise<{ module: string; options: Record<string, unknown>; result: unknown }> {
  seen.splice(0);
  const result = await call();
  return { ...seen.pop()!, result };
}

/** Output options differ on purpose (the API answers in the --json shape and never colours). */
// Output flags differ by design; so does the signal: the CLI's comes from SIGINT/SIGTERM, the API's from the caller.
const withoutOutput = ({ json: _json, color: _color, signal: _signal, ...rest }: Record<string, unknown>) => rest;

describe('the API hands the commands what the CLI hands them', () => {
  it.each<[string[], () => Promise<unknown>]>([
    [['rotate-identity'], () => rotateIdentity()],
    [
      [
        'rotate-identity',
        '--k8s-secret',
        'runner',
        '-n',
        'ns',
        '--no-verify',
        '--rollout',
        'deployment/x',
        '--rollout-timeout',
        '1h',
        '--api-key-file',
        '/k',
        '--fallback',
        '--dry-run',
      ],
      () =>
        rotateIdentity({
          k8sSecret: 'runner',
          namespace: 'ns',
          verify: false,
          rollout: 'deployment/x',
          rolloutTimeoutSeconds: 3600,
          apiKeyFile: '/k',
          fallback: true,
          dryRun: true,
        }),
    ],
    [
      [
        'rotate-identity',
        '-c',
        '/cfg',
        '--identity-file',
        '/cfg/id.json',
        '--hostname',
        'h1',
        '--timeout',
        '30s',
        '--profile',
        'p',
        '--if-older-than',
        '90d',
      ],
      () =>
        rotateIdentity({
          cfgPath: '/cfg',
          identityFile: '/cfg/id.json',
          hostname: 'h1',
          timeoutSeconds: 30,
          profile: 'p',
          ifOlderThanSeconds: 90 * 86_400,
        }),
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
        '--if-older-than',
        '90d',
        '--wait-lock',
        '1m',
        '--no-connections',
        '--agent-version',
        '7.66.0',
      ],
      () =>
        rotateParIdentity({
          extraCfg: ['a.yaml', 'b.yaml'],
          context: 'prod',
          secretName: 's',
          keepPrevious: false,
          ifOlderThanSeconds: 90 * 86_400,
          waitLockSeconds: 60,
          connections: false,
          agentVersion: '7.66.0',
        }),
    ],
    [['status'], () => status()],
    [['status', '--verify', '--timeout', '1500ms'], () => status({ verify: true, timeoutSeconds: 1.5 })],
    [
      ['status', '--secret', '-n', 'datadog', '--kubeconfig', '/kc'],
      () => status({ secret: true, namespace: 'datadog', kubeconfig: '/kc' }),
    ],
    [['status', '-A', '--hostname', 'h1'], () => status({ allNamespaces: true, hostname: 'h1' })],
    [['status', '--k8s-secret', 'r', '--pods', 'deployment/par'], () => status({ k8sSecret: 'r', pods: 'deployment/par' })],
    [['status', '--secret', '--pods'], () => status({ secret: true, pods: true })],
  ])('%j', async (argv, call) => {
    const cli = await viaCli(argv);
    const api = await viaApi(call);
    expect(api.module).toBe(cli.module);
    // The API always hands the rotations a signal (the caller's, or one that never aborts).
    const signal = api.options.signal;
    expect(signal === undefined || signal instanceof AbortSignal).toBe(true);
    expect(withoutOutput(api.options)).toEqual(withoutOutput(cli.options));
  });

  it('answers with the --json object, after a JSON round trip (no undefined, dates as strings); the summary is not printed', async () => {
    const stdout = vi.spyOn(process.stdout, 'write');
    const stderr = vi.spyOn(process.stderr, 'write');
    try {
      const { result } = await viaApi(() => status());
      expect(result).toEqual({ schemaVersion: 1, status: 'ok', command: 'status', answer: 42, when: '1970-01-01T00:00:00.000Z' });
      expect(stdout).not.toHaveBeenCalled();
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
  });

  it('passes what only a program can give: key values and an AbortSignal', async () => {
    const signal = new AbortController().signal;
    const { options } = await viaApi(() => rotateIdentity({ apiKey: 'the-api-key', appKey: 'the-app-key', signal }));
    expect(options).toMatchObject({ apiKey: 'the-api-key', appKey: 'the-app-key', signal });
    const { options: defaulted } = await viaApi(() => rotateParIdentity());
    expect(defaulted.signal).toBeInstanceOf(AbortSignal);
    expect((defaulted.signal as AbortSignal).aborted).toBe(false);
  });
});

describe('the options are the flags (the schemas are read from the command table)', () => {
  // Every key the public types have, each with a value of its type: tsc refuses a key the type lacks
  // (and Required<> one it has that is missing), the comparison below a flag the type lacks.
  const signal = new AbortController().signal;
  const program = { env: {}, onProgress: () => undefined };
  const rotation = {
    ...program,
    apiKey: 'a',
    appKey: 'b',
    apiKeyFile: '/k',
    appKeyFile: '/p',
    profile: 'p',
    agentVersion: '7.66.0',
    connections: false,
    timeoutSeconds: 1,
    dryRun: true,
    verify: false,
    keepPrevious: false,
    ifOlderThanSeconds: 1,
    waitLockSeconds: 0,
    rollout: 'deployment/x',
    fallback: true,
    rolloutTimeoutSeconds: 1,
    allowRegionChange: true,
    overrideAgentSettings: true,
    signal,
    cfgPath: '/c',
    extraCfg: ['/e'],
    kubeconfig: '/kc',
    context: 'c',
    namespace: 'n',
  };
  const every = {
    rotateIdentity: {
      ...rotation,
      identityFile: '/i',
      k8sSecret: 's',
      hostname: 'h',
      envFromRunner: true,
    } satisfies Required<RotateIdentityOptions>,
    rotateParIdentity: {
      ...rotation,
      secretName: 's',
      create: true,
      agent: 'deployment/a',
      overrideAgentSettings: true,
    } satisfies Required<RotateParIdentityOptions>,
    status: {
      ...program,
      cfgPath: '/c',
      extraCfg: [],
      kubeconfig: '/kc',
      context: 'c',
      namespace: 'n',
      identityFile: '/i',
      secret: true,
      k8sSecret: 's',
      secretName: 's',
      allNamespaces: false,
      pods: true,
      hostname: 'h',
      agentVersion: '7.78.0',
      envFromRunner: true,
      agent: 'deployment/a',
      overrideAgentSettings: true,
      verify: true,
      profile: 'p',
      timeoutSeconds: 1,
    } satisfies Required<StatusOptions>,
    watchIdentity: {
      ...program,
      cfgPath: '/c',
      extraCfg: [],
      kubeconfig: '/kc',
      context: 'c',
      namespace: 'n',
      secretName: 's',
      output: '/o',
      relistIntervalMs: 0,
      splayMs: 0,
      signal,
      onEvent: () => undefined,
      onLoaded: () => undefined,
      onWritten: () => undefined,
      onError: () => undefined,
    } satisfies Required<WatchIdentityOptions>,
  } as const;

  it.each(Object.keys(every) as (keyof typeof every)[])(
    '%s: the schema names exactly the keys of the public type, and accepts a value of each',
    (fn) => {
      expect(Object.keys(SCHEMAS[fn]).sort()).toEqual(Object.keys(every[fn]).sort());
      // A key and its file are two sources of one key: the check refuses both, so the files go.
      const accepted = fn.startsWith('rotate') ? { ...every[fn], apiKeyFile: undefined, appKeyFile: undefined } : every[fn];
      expect(() => checkOptions(fn, SCHEMAS[fn], accepted)).not.toThrow();
    },
  );

  it('a new flag becomes an option of the API, with the kind and bounds its spec gives', async () => {
    const { rotateIdentity: spec } = await import('../../src/cli/rotation-commands.js');
    expect(SCHEMAS.rotateIdentity.timeoutSeconds).toEqual({ min: 0, minInclusive: false, max: 3600, unit: 'seconds' });
    expect(SCHEMAS.rotateIdentity.waitLockSeconds).toEqual({ min: 0, minInclusive: true, max: 86_400, unit: 'seconds' });
    expect(SCHEMAS.watchIdentity.relistIntervalMs).toEqual({ min: 0, minInclusive: true, max: 86_400_000, unit: 'ms' });
    expect(spec.flags.timeoutSeconds.duration).toBeDefined();
  });

  it('without an option the command gets the flag default, through the same toOptions', async () => {
    const { options } = await viaApi(() => status());
    const cli = await viaCli(['status']);
    expect(withoutOutput(options)).toEqual(withoutOutput(cli.options));
    expect(options).toMatchObject({ cfgPath: '/etc/datadog-agent', timeoutSeconds: 30 });
  });
});

describe('checkOptions (what a JavaScript caller gets instead of a compiler)', () => {
  const check = (options: unknown) => () => checkOptions('rotateIdentity', SCHEMAS.rotateIdentity, options as object);

  it.each<[unknown, string]>([
    [{ apikey: 'secret-value' }, 'rotateIdentity: unknown option "apikey"'],
    [{ apiKey: 42 }, 'rotateIdentity: option apiKey must be a non-empty string'],
    [{ apiKey: '' }, 'rotateIdentity: option apiKey must be a non-empty string'],
    [{ timeoutSeconds: '2m' }, 'rotateIdentity: option timeoutSeconds must be a number of seconds more than 0, at most 3600'],
    [{ timeoutSeconds: 0 }, 'rotateIdentity: option timeoutSeconds must be a number of seconds more than 0, at most 3600'],
    [{ timeoutSeconds: Number.NaN }, 'rotateIdentity: option timeoutSeconds must be a number of seconds more than 0, at most 3600'],
    [{ waitLockSeconds: -1 }, 'rotateIdentity: option waitLockSeconds must be a number of seconds from 0 to 86400'],
    [{ extraCfg: 'one.yaml' }, 'rotateIdentity: option extraCfg must be an array of non-empty strings'],
    [{ signal: { aborted: false } }, 'rotateIdentity: option signal must be an AbortSignal'],
    [{ env: { DD_SITE: 1 } }, 'rotateIdentity: option env must be an object of strings (like process.env)'],
    [
      { apiKey: 'secret-value', apiKeyFile: '/k' },
      'rotateIdentity: apiKey and apiKeyFile are two sources of the same key: give one of them',
    ],
    [{ appKeyFile: '-' }, 'rotateIdentity: appKeyFile "-" (standard input) is for the CLI'],
    ['secret-value', 'rotateIdentity: options must be an object'],
    [['secret-value'], 'rotateIdentity: options must be an object'],
  ])('%j → USAGE', (options, message) => {
    expect(check(options)).toThrow(expect.objectContaining({ code: 'USAGE', exitCode: 2, message }));
    try {
      check(options)();
    } catch (err) {
      expect(JSON.stringify({ message: (err as Error).message, hint: (err as { hint: string }).hint })).not.toContain('secret-value');
    }
  });

  it('accepts undefined values and no options at all', () => {
    expect(check({ apiKey: undefined, waitLockSeconds: 0, hostname: undefined })).not.toThrow();
    expect(checkOptions('status', SCHEMAS.status, undefined)).toEqual({});
    expect(() => checkOptions('status', SCHEMAS.status, { pods: true })).not.toThrow();
  });

  it('rejects through the promise, like every other failure of the API', async () => {
    await expect(rotateIdentity({ apikey: 'x' } as never)).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('apiIo', () => {
  it('routes progress to onProgress, prints nothing, and survives a throwing onProgress', () => {
    const got: unknown[] = [];
    const stderr = vi.spyOn(process.stderr, 'write');
    try {
      const report = createReporter(apiIo({ env: {}, onProgress: (p) => got.push(p) }), { json: true, color: false });
      report.step('resolve');
      report.info('note');
      report.warn('careful');
      const throwing = createReporter(
        apiIo({
          onProgress: () => {
            throw new Error('logger down');
          },
        }),
        { json: true, color: false },
      );
      expect(() => throwing.step('x')).not.toThrow();
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
    }
    expect(got).toEqual([
      { level: 'step', message: 'resolve' },
      { level: 'info', message: 'note' },
      { level: 'warn', message: 'careful' },
    ]);
  });

  it('reads the env it is given (default process.env) and never reads stdin', async () => {
    const env = { DD_SITE: 'datadoghq.eu' };
    expect(apiIo({ env }).env).toBe(env);
    expect(apiIo({}).env).toBe(process.env);
    expect(await apiIo({}).readStdin()).toBe('');
  });
});

describe('layering (docs/architecture.md)', () => {
  const SRC = new URL('../../src/', import.meta.url).pathname;
  async function imports(): Promise<{ file: string; spec: string }[]> {
    const files = (await readdir(SRC, { recursive: true })).filter((f) => f.endsWith('.ts'));
    const found: { file: string; spec: string }[] = [];
    for (const file of files) {
      const text = await readFile(join(SRC, file), 'utf8');
      for (const [, spec] of text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g))
        found.push({ file, spec: relative(SRC, join(SRC, file, '..', spec!)) });
    }
    return found;
  }

  it('nothing in src/ imports the API; the API reads the command table but never commander’s program', async () => {
    const all = await imports();
    expect(all).toContainEqual({ file: 'api/commands.ts', spec: 'commands/rotate-identity.js' });
    expect(all).toContainEqual({ file: 'api/options.ts', spec: 'cli/rotation-commands.js' });
    const isApi = (path: string) => path === 'api.ts' || path === 'api.js' || path.startsWith('api/');
    expect(all.filter((i) => !isApi(i.file) && isApi(i.spec))).toEqual([]);
    const program = ['cli.js', 'cli/main.js', 'cli/program.js', 'cli/redacting-command.js'];
    expect(all.filter((i) => isApi(i.file) && program.includes(i.spec))).toEqual([]);
  });

  it('nothing in src/ imports from outside src/: the emulators (emulators/) are a bundle loaded at run time, never imported', async () => {
    const all = await imports();
    expect(all.length).toBeGreaterThan(100);
    expect(all.filter((i) => i.spec.startsWith('..'))).toEqual([]);
    // `import type` counts too: the contract of dist/emulators.js is declared in src/commands/emulator.ts.
    for (const { file } of all) expect(await readFile(join(SRC, file), 'utf8'), file).not.toMatch(/['"](?:\.\.\/)+emulators\//);
  });
});
