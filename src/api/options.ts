import { watch } from '../cli/cluster-commands.js';
import { type Flag, type Flags, type Values, valuesOf } from '../cli/flag.js';
import { status } from '../cli/inspection-commands.js';
import { rotateIdentity, rotateParIdentity } from '../cli/rotation-commands.js';
import type { Arguments, CommandInput, CommandSpec } from '../cli/spec.js';
import { UsageError } from '../errors.js';
import type { Io } from '../io.js';
import type { DurationFlag } from '../time/index.js';
import type { CommonOptions, RotateIdentityOptions, RotateParIdentityOptions, StatusOptions, WatchIdentityOptions } from './types.js';

// The API's side of what the CLI's flag parsers do, read from the same command definitions: an option
// is a flag (its name, its kind, its bounds, its default), checked by name and type (a JavaScript
// caller has no compiler to catch a typo), then handed to the command's own toOptions as the CLI
// hands it the parsed flags. Error messages name the option, never its value (it may be a key).

type Kind = 'string' | 'boolean' | 'strings' | 'function' | 'signal' | 'env' | 'string-or-true' | Bounds;

/** A number within bounds, in the option's own unit. */
interface Bounds {
  min: number;
  /** Whether `min` itself is allowed (false: strictly more). */
  minInclusive: boolean;
  max: number;
  unit: string;
}

type Schema = Record<string, Kind>;

/** A duration flag's bounds in `unit` (the API's watch counts in ms what the flag counts in seconds). */
function boundsOf(d: DurationFlag, unit: 's' | 'ms' = d.unit): Bounds {
  const unitMs = unit === 's' ? 1000 : 1;
  return {
    min: (d.minMs ?? 0) / unitMs,
    minInclusive: d.minMs !== undefined,
    max: d.maxMs / unitMs,
    unit: unit === 's' ? 'seconds' : 'ms',
  };
}

/** What the API accepts for a flag: what its definition says its value is. */
function kindOf(flag: Flag): Kind {
  if (flag.duration) return boundsOf(flag.duration);
  switch (flag.kind) {
    case 'switch':
    case 'negation':
    case 'tristate':
      return 'boolean';
    case 'texts':
      return 'strings';
    case 'text-or-true':
      return 'string-or-true';
    case 'duration':
    case 'count':
      // No API option is a count (only the emulator's flags are), and every duration has its bounds.
      throw new Error(`command table: ${flag.long} has no bounds for the API`);
    default:
      return 'string';
  }
}

/** Every flag of the command but those of the process (--json, --no-color), by option name. */
function flagSchema(flags: Flags): Schema {
  return Object.fromEntries(
    Object.entries(flags)
      .filter(([, f]) => !f.cliOnly)
      .map(([option, f]) => [option, kindOf(f)]),
  );
}

/** What only a program can give: the environment and progress callback of every function. */
const PROGRAM = { env: 'env', onProgress: 'function' } as const satisfies Schema;
/** The keys themselves (the CLI only reads files), and the caller's AbortSignal. */
const ROTATION = { ...PROGRAM, apiKey: 'string', appKey: 'string', signal: 'signal' } as const satisfies Schema;

/** watch without the supervision: the Secret, the output file and the splay (the re-list in ms, below). */
const WATCH_IDENTITY_FLAGS = (({ cfgPath, extraCfg, kubeconfig, context, namespace, secretName, output, splayMs }) => ({
  cfgPath,
  extraCfg,
  kubeconfig,
  context,
  namespace,
  secretName,
  output,
  splayMs,
}))(watch.flags);
const relistInterval = watch.flags.relistIntervalSeconds;

export const SCHEMAS: Record<'rotateIdentity' | 'rotateParIdentity' | 'status' | 'watchIdentity', Schema> = {
  rotateIdentity: { ...flagSchema(rotateIdentity.flags), ...ROTATION },
  rotateParIdentity: { ...flagSchema(rotateParIdentity.flags), ...ROTATION },
  status: { ...flagSchema(status.flags), ...PROGRAM },
  watchIdentity: {
    ...flagSchema(WATCH_IDENTITY_FLAGS),
    relistIntervalMs: boundsOf(relistInterval.duration!, 'ms'),
    ...PROGRAM,
    signal: 'signal',
    onEvent: 'function',
    onLoaded: 'function',
    onWritten: 'function',
    onError: 'function',
  },
};

/**
 * The options a command's flags give an API call: every flag but those of the process (--json,
 * --no-color), optional, with its value's type. The public types (api/types.ts) are shipped as
 * declarations without the command table, so they are written there; tsc holds them to this.
 */
type FlagOptions<F extends Flags> = { [K in Exclude<keyof F, 'json' | 'color'>]?: NonNullable<Values<F>[K]> };
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type WithoutProgram<O> = Omit<O, keyof CommonOptions | 'apiKey' | 'appKey' | 'signal'>;
// A flag added, removed or retyped in a command's definition and not in its public type fails here.
const PUBLIC_TYPES_ARE_THE_FLAGS: [
  Same<WithoutProgram<RotateIdentityOptions>, FlagOptions<typeof rotateIdentity.flags>>,
  Same<WithoutProgram<RotateParIdentityOptions>, FlagOptions<typeof rotateParIdentity.flags>>,
  Same<WithoutProgram<StatusOptions>, FlagOptions<typeof status.flags>>,
  Same<Omit<WithoutProgram<WatchIdentityOptions>, 'relistIntervalMs' | `on${string}`>, FlagOptions<typeof WATCH_IDENTITY_FLAGS>>,
] = [true, true, true, true];
void PUBLIC_TYPES_ARE_THE_FLAGS;

/** The flags' defaults of watch, for watchIdentity (which runs without the command's toOptions). */
export const WATCH_DEFAULTS = {
  cfgPath: watch.flags.cfgPath.default,
  relistIntervalMs: relistInterval.default * 1000,
  splayMs: watch.flags.splayMs.default,
};

/**
 * The input of the command's toOptions for an API call: each flag's value from the caller's option
 * of the same name, else the flag's default; answered in the --json shape, never coloured.
 */
export function inputOf<F extends Flags, A extends Arguments>(
  spec: CommandSpec<unknown, F, A>,
  options: object,
): CommandInput<F, Record<never, never>> {
  const given = new Map(Object.entries(options).filter(([, value]) => value !== undefined));
  return { ...valuesOf(spec.flags, (option) => given.get(option)), json: true, color: false, givenOptions: [...given.keys()] };
}

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
    return (
      typeof value === 'number' && Number.isFinite(value) && (kind.minInclusive ? value >= kind.min : value > kind.min) && value <= kind.max
    );
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
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new UsageError(`${fn}: options must be an object`, `Call ${fn}({ … }) with the options of the README's "Use from Node" section.`);
  for (const [key, value] of Object.entries(options)) {
    const kind = schema[key];
    if (kind === undefined) {
      throw new UsageError(`${fn}: unknown option ${JSON.stringify(key)}`, `${fn} takes: ${Object.keys(schema).join(', ')}.`);
    }
    if (value !== undefined && !fits(kind, value))
      throw new UsageError(`${fn}: option ${key} must be ${describe(kind)}`, `Nothing was done. Fix ${key} and call ${fn} again.`);
  }
  const o = options as Record<string, unknown>;
  for (const [value, file] of [
    ['apiKey', 'apiKeyFile'],
    ['appKey', 'appKeyFile'],
  ] as const) {
    if (o[value] !== undefined && o[file] !== undefined)
      throw new UsageError(`${fn}: ${value} and ${file} are two sources of the same key: give one of them`, 'Nothing was done.');
  }
  for (const file of ['apiKeyFile', 'appKeyFile']) {
    if (o[file] === '-')
      throw new UsageError(
        `${fn}: ${file} "-" (standard input) is for the CLI`,
        `Pass the key itself as ${file.replace('File', '')}, or the path of a file holding it.`,
      );
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

/** The API's answer: exactly the object `--json` prints (plain data, no undefined fields); the result types hold no Date. */
export function jsonResult<J extends object>(result: J): J {
  return JSON.parse(JSON.stringify(result)) as J;
}
