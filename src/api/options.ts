import { UsageError } from '../errors.js';
import type { Io } from '../io.js';
import { DAY_MS, HOUR_MS } from '../time/index.js';
import type { CommonOptions, RotateIdentityOptions, RotateParIdentityOptions, StatusOptions, WatchIdentityOptions } from './types.js';

/** The public options of each function: SCHEMAS must name exactly their keys (tsc checks it). */
interface ApiOptions {
  rotateIdentity: RotateIdentityOptions;
  rotateParIdentity: RotateParIdentityOptions;
  status: StatusOptions;
  watchIdentity: WatchIdentityOptions;
}

// The API's side of what the CLI's flag parsers do: options checked by name and type (a JavaScript
// caller has no compiler to catch a typo), durations within the flags' bounds, the flags' defaults
// (test/unit/api-options.test.ts compares them with the command table), and an Io that prints nothing.
// Error messages name the option, never its value (it may be a key).

/** The CLI defaults, by option name (flag defaults in src/cli/*-commands.ts). */
export const API_DEFAULTS = {
  cfgPath: '/etc/datadog-agent',
  profile: 'default',
  rotationTimeoutSeconds: 120,
  statusTimeoutSeconds: 30,
  rolloutTimeoutSeconds: 600,
  relistIntervalSeconds: 600,
  splayMs: 0,
} as const;

type Kind = 'string' | 'boolean' | 'strings' | 'function' | 'signal' | 'env' | 'string-or-true' | Bounds;

/** A number within bounds, in the option's own unit. */
interface Bounds {
  min: number;
  /** Whether `min` itself is allowed (false: strictly more). */
  minInclusive: boolean;
  max: number;
  unit: string;
}

const seconds = (maxMs: number, minInclusive = false): Bounds => ({ min: 0, minInclusive, max: maxMs / 1000, unit: 'seconds' });
const millis = (maxMs: number): Bounds => ({ min: 0, minInclusive: true, max: maxMs, unit: 'ms' });

type Schema = Record<string, Kind>;

const COMMON = { cfgPath: 'string', extraCfg: 'strings', env: 'env', onProgress: 'function' } as const satisfies Schema;
const KUBE = { kubeconfig: 'string', context: 'string', namespace: 'string' } as const satisfies Schema;
const CREDENTIALS = { apiKey: 'string', appKey: 'string', apiKeyFile: 'string', appKeyFile: 'string', profile: 'string', agentVersion: 'string' } as const satisfies Schema;
const ROTATION = {
  ...COMMON,
  ...KUBE,
  ...CREDENTIALS,
  // The bounds of --timeout, --if-older-than, --wait-lock and --rollout-timeout (src/cli/duration-flags.ts).
  timeoutSeconds: seconds(HOUR_MS),
  dryRun: 'boolean',
  verify: 'boolean',
  connections: 'boolean',
  keepPrevious: 'boolean',
  ifOlderThanSeconds: seconds(3650 * DAY_MS),
  waitLockSeconds: seconds(DAY_MS, true),
  rollout: 'string',
  fallback: 'boolean',
  rolloutTimeoutSeconds: seconds(DAY_MS),
  signal: 'signal',
} as const satisfies Schema;

export const SCHEMAS = {
  rotateIdentity: { ...ROTATION, identityFile: 'string', k8sSecret: 'string', hostname: 'string' },
  rotateParIdentity: { ...ROTATION, secretName: 'string' },
  status: {
    ...COMMON,
    ...KUBE,
    identityFile: 'string',
    secret: 'boolean',
    k8sSecret: 'string',
    secretName: 'string',
    allNamespaces: 'boolean',
    pods: 'string-or-true',
    hostname: 'string',
    verify: 'boolean',
    timeoutSeconds: seconds(HOUR_MS),
  },
  watchIdentity: {
    ...COMMON,
    ...KUBE,
    secretName: 'string',
    output: 'string',
    // --relist-interval and --splay: at most a day.
    relistIntervalMs: millis(DAY_MS),
    splayMs: millis(DAY_MS),
    signal: 'signal',
    onEvent: 'function',
    onLoaded: 'function',
    onWritten: 'function',
    onError: 'function',
  },
} as const satisfies { [F in keyof ApiOptions]: Record<keyof ApiOptions[F], Kind> };

function describe(kind: Kind): string {
  if (typeof kind === 'object') {
    return `a number of ${kind.unit} ${kind.minInclusive ? 'from' : 'more than'} ${kind.min}${kind.minInclusive ? ' to' : ', at most'} ${kind.max}`;
  }
  return {
    string: 'a non-empty string',
    boolean: 'a boolean',
    strings: 'an array of non-empty strings',
    function: 'a function',
    signal: 'an AbortSignal',
    env: 'an object of strings (like process.env)',
    'string-or-true': 'a non-empty string or true',
  }[kind];
}

function fits(kind: Kind, value: unknown): boolean {
  if (typeof kind === 'object') {
    return typeof value === 'number' && Number.isFinite(value) && (kind.minInclusive ? value >= kind.min : value > kind.min) && value <= kind.max;
  }
  switch (kind) {
    case 'string':
      return typeof value === 'string' && value !== '';
    case 'boolean':
      return typeof value === 'boolean';
    case 'strings':
      return Array.isArray(value) && value.every((v) => typeof v === 'string' && v !== '');
    case 'function':
      return typeof value === 'function';
    case 'signal':
      return value instanceof AbortSignal;
    case 'env':
      return typeof value === 'object' && value !== null && Object.values(value).every((v) => v === undefined || typeof v === 'string');
    case 'string-or-true':
      return value === true || (typeof value === 'string' && value !== '');
  }
}

/**
 * Throws USAGE for anything but a plain options object whose every key is known and every defined
 * value has the right type; returns it (an empty object for undefined).
 */
export function checkOptions<T extends object>(fn: string, schema: Schema, options: T | undefined): T {
  if (options === undefined) return {} as T;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new UsageError(`${fn}: options must be an object`, `Call ${fn}({ … }) with the options of the README's "Use from Node" section.`);
  for (const [key, value] of Object.entries(options)) {
    const kind = schema[key];
    if (kind === undefined) {
      throw new UsageError(`${fn}: unknown option ${JSON.stringify(key)}`, `${fn} takes: ${Object.keys(schema).join(', ')}.`);
    }
    if (value !== undefined && !fits(kind, value)) throw new UsageError(`${fn}: option ${key} must be ${describe(kind)}`, `Nothing was done. Fix ${key} and call ${fn} again.`);
  }
  const o = options as Record<string, unknown>;
  for (const [value, file] of [
    ['apiKey', 'apiKeyFile'],
    ['appKey', 'appKeyFile'],
  ] as const) {
    if (o[value] !== undefined && o[file] !== undefined) throw new UsageError(`${fn}: ${value} and ${file} are two sources of the same key: give one of them`, 'Nothing was done.');
  }
  for (const file of ['apiKeyFile', 'appKeyFile']) {
    if (o[file] === '-') throw new UsageError(`${fn}: ${file} "-" (standard input) is for the CLI`, `Pass the key itself as ${file.replace('File', '')}, or the path of a file holding it.`);
  }
  return options;
}

/** What the API's functions hand the commands as their outside world: nothing printed, nothing read from stdin. */
export function apiIo(options: Pick<CommonOptions, 'env' | 'onProgress'>): Io {
  const onProgress = options.onProgress;
  return {
    stdout: () => undefined,
    stderr: () => undefined,
    // The commands only ever read it (a copy would hide later changes the caller makes on purpose).
    env: (options.env ?? process.env) as NodeJS.ProcessEnv,
    now: () => new Date(),
    isTTY: false,
    stdinIsTTY: false,
    readStdin: async () => '',
    promptHidden: async () => {
      throw new UsageError('the API never prompts', 'Pass the keys as options.');
    },
    progress: (level, message) => {
      try {
        onProgress?.({ level, message });
      } catch {
        // Logging never breaks a run half-way (README: a throwing onProgress is ignored).
      }
    },
  };
}

/** The API's answer: exactly the object `--json` prints (plain data, no undefined fields, dates as strings). */
export function jsonResult<T>(result: Record<string, unknown>): T {
  return JSON.parse(JSON.stringify(result)) as T;
}
