import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FileTooLargeError, formatBytes, readHandleAtMost } from '../bounded-file.js';
import { ConfigError } from '../errors.js';
import { sanitizeServerString } from '../sanitize.js';
import { castToBool, castToString } from './agent-values.js';
import { decodeYamlBytes, readAgentYaml } from './agent-yaml.js';
import { CONFIG_KEYS, type ConfigKey, envNameOf } from './config-keys.js';
import { resolveSecretHandles, secretBackendSettings, secretHandle } from './secrets-backend.js';

// Loads the agent's YAML config the way the Go agent does: main file, then -E extra files merged
// over it, then DD_* environment variables over both, then the defaults of docs/protocol.md §9. Files are
// read by agent-yaml.ts (yaml.v2's YAML 1.1), values converted by agent-values.ts (spf13/cast):
// docs/config-yaml.md. Every ENC[] handle of the config (any key, files and DD_* alike) is resolved
// here, in one run of the secrets backend as the agent does at start-up (docs/protocol.md §10).

type ConfigValue = string | boolean | number | Record<string, unknown> | unknown[] | null;

export interface AgentConfig {
  /** The main config file that was read, if any. */
  file?: string;
  /** Every file read, in merge order. */
  files: string[];
  get(key: string): ConfigValue | undefined;
  getString(key: string): string | undefined;
  getBool(key: string): boolean;
  getStringMap(key: string): Record<string, string>;
  /** Where a key's value came from: `env DD_X`, a file path, or `default`. */
  sourceOf(key: string): string;
  /** The backend run failed: the handles stay as written, and whoever needs one reports this. */
  secretsFailure?: Error;
}

/** The secrets backend's own settings are never handles to resolve. */
const isBackendSetting = (path: string) => path.startsWith('secret_backend');

/** Each handle with where it was first found (`proxy.https from /etc/datadog-agent/datadog.yaml`), for the error messages. */
function collectHandles(node: unknown, path: string, where: string, into: Map<string, string>): void {
  if (typeof node === 'string') {
    const handle = secretHandle(node);
    if (handle !== undefined && !into.has(handle)) into.set(handle, path ? `${path} from ${where}` : where);
  } else if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) collectHandles(item, `${path}[${i}]`, where, into);
  } else if (node && typeof node === 'object') {
    for (const [key, child] of Object.entries(node)) {
      const childPath = path ? `${path}.${key.toLowerCase()}` : key.toLowerCase();
      if (!isBackendSetting(childPath)) collectHandles(child, childPath, where, into);
    }
  }
}

function substituteHandles(node: unknown, values: Map<string, string>): { value: unknown; resolved: boolean } {
  if (typeof node === 'string') {
    const handle = secretHandle(node);
    return handle !== undefined && values.has(handle) ? { value: values.get(handle), resolved: true } : { value: node, resolved: false };
  }
  if (Array.isArray(node)) {
    const items = node.map((item) => substituteHandles(item, values));
    return { value: items.map((i) => i.value), resolved: items.some((i) => i.resolved) };
  }
  if (node && typeof node === 'object') {
    const entries = Object.entries(node).map(([k, v]) => [k, substituteHandles(v, values)] as const);
    return { value: Object.fromEntries(entries.map(([k, v]) => [k, v.value])), resolved: entries.some(([, v]) => v.resolved) };
  }
  return { value: node, resolved: false };
}

/** A config file's text already in memory (a ConfigMap key mounted in the agent's Pod): `source` names it. */
export interface ConfigLayer {
  source: string;
  text: string;
}

interface LoadConfigOptions {
  /** Directory holding the config, or a .yaml file path; none: no file is read from disk. */
  cfgPath?: string;
  extraFiles?: string[];
  /** Files read elsewhere (src/agent: the cluster agent's mounted ConfigMaps), merged in order before extraFiles. */
  layers?: ConfigLayer[];
  env: NodeJS.ProcessEnv;
  /** Candidate file names in the directory, first existing wins (cluster agent: datadog-cluster.yaml first). */
  fileNames?: string[];
  /** Where a variable of `env` came from, when it is not this process's (`env DD_SITE of deployment ns/name`). */
  envSource?: (name: string) => string | undefined;
  /**
   * false: ENC[] handles stay as written. The settings of an agent running elsewhere name its own
   * secret_backend_command, a path in its container: never run here.
   */
  secretsBackend?: false;
  /**
   * The path was chosen (a `-c` other than the default): a directory that does not exist is
   * CONFIG_NOT_FOUND. The default directory may be absent (a container configured by DD_* alone).
   */
  given?: boolean;
}

type Tree = Record<string, unknown>;

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function notFound(path: string, what: string, flag: string): ConfigError {
  return new ConfigError(
    'CONFIG_NOT_FOUND',
    `${what} ${path} does not exist`,
    `Nothing was read or changed. Check the path given with ${flag} (a typo?), then run again.`,
    { file: path },
  );
}

async function findMainFile(cfgPath: string, fileNames: string[], given: boolean): Promise<string | undefined> {
  if (/\.ya?ml$/.test(cfgPath)) {
    if (await isFile(cfgPath)) return cfgPath;
    throw notFound(cfgPath, 'config file', '-c (a directory holding datadog.yaml, or the .yaml file itself)');
  }
  // A directory named on the command line that is not there is a mistake to say, never "environment only".
  if (given && !(await stat(cfgPath).catch(() => undefined))) throw notFound(cfgPath, 'config directory', '-c');
  for (const name of fileNames) {
    const candidate = join(cfgPath, name);
    if (await isFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The agent reads its config files whole, with no cap; its shipped datadog.yaml, every comment
 * included, is about 100 KiB. 8 MiB is far above any real config and keeps a runaway file (a log
 * written over it, a generated file gone wrong) from costing seconds and gigabytes to parse
 * (docs/config-yaml.md, docs/security.md).
 */
const MAX_CONFIG_FILE_BYTES = 8 * 1024 * 1024;

async function parseYamlFile(path: string): Promise<Tree> {
  let bytes: Uint8Array;
  try {
    const handle = await open(path, 'r');
    try {
      bytes = await readHandleAtMost(handle, MAX_CONFIG_FILE_BYTES);
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (err instanceof FileTooLargeError) {
      throw new ConfigError(
        'CONFIG_TOO_LARGE',
        `config file ${path} is ${err.size} bytes or more: par-identity reads agent config files of at most ${formatBytes(MAX_CONFIG_FILE_BYTES)}`,
        'Nothing was read or changed. Check that this is the agent config you meant (-c, -E): a datadog.yaml is a few hundred KiB at most.',
        { file: path, limitBytes: MAX_CONFIG_FILE_BYTES },
      );
    }
    throw new ConfigError(
      'CONFIG_UNREADABLE',
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`,
      'Check the path given with -c/-E and its permissions.',
      { file: path },
    );
  }
  return readAgentYaml(path, decodeYamlBytes(path, bytes));
}

/** Each mapping's keys lower-cased, built the first time a key is not found as written. */
const lowerCased = new WeakMap<Tree, Map<string, unknown>>();

/** A child of a mapping as the agent finds it: it lower-cases every key it loads (loadYamlInto). */
function childOf(node: Tree, part: string): unknown {
  if (Object.hasOwn(node, part)) return node[part];
  let index = lowerCased.get(node);
  if (!index) {
    index = new Map();
    // Two keys differing only in case: the agent keeps whichever its map iteration visits last (no
    // fixed order); here the first written wins.
    for (const key of Object.keys(node)) if (!index.has(key.toLowerCase())) index.set(key.toLowerCase(), node[key]);
    lowerCased.set(node, index);
  }
  return index.get(part);
}

/**
 * The value at a dotted key. The agent lower-cases keys and splits a key holding dots into nested
 * maps (read_config_file.go, loadYamlInto), so `Private_Action_Runner:` and a flat
 * `private_action_runner.enabled: true` are found too.
 */
function lookup(node: unknown, parts: string[]): unknown {
  if (parts.length === 0) return node;
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
  for (let take = 1; take <= parts.length; take++) {
    const child = childOf(node as Tree, parts.slice(0, take).join('.'));
    if (child === undefined) continue;
    const found = lookup(child, parts.slice(take));
    if (found !== undefined) return found;
  }
  return undefined;
}

function parseEnvMap(raw: string, name: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new ConfigError('CONFIG_VALUE', `${name} is not a JSON object`, `Set ${name} to a JSON object such as {"X-Header":"value"}.`);
}

export async function loadAgentConfig(options: LoadConfigOptions): Promise<AgentConfig> {
  const fileNames = options.fileNames ?? ['datadog.yaml'];
  const mainFile = options.cfgPath === undefined ? undefined : await findMainFile(options.cfgPath, fileNames, options.given === true);
  const layers: { file: string; tree: Tree }[] = [];
  if (mainFile) layers.push({ file: mainFile, tree: await parseYamlFile(mainFile) });
  for (const layer of options.layers ?? []) layers.push({ file: layer.source, tree: await readAgentYaml(layer.source, layer.text) });
  for (const extra of options.extraFiles ?? []) {
    if (!(await isFile(extra))) {
      throw notFound(extra, 'extra config file', '-E');
    }
    layers.push({ file: extra, tree: await parseYamlFile(extra) });
  }
  const known = new Map<string, ConfigKey>(CONFIG_KEYS.map((k) => [k.key, k]));
  const envNames = (key: string): string[] => [envNameOf(key), ...(known.get(key)?.aliases ?? [])];

  const resolveRaw = (key: string): { value: unknown; source: string } => {
    for (const name of envNames(key)) {
      const raw = options.env[name];
      // The Go agent skips empty variables (`ok && value != ""`), so DD_X= does not hide the file.
      if (raw !== undefined && raw !== '') return { value: raw, source: options.envSource?.(name) ?? `env ${name}` };
    }
    for (let i = layers.length - 1; i >= 0; i--) {
      const value = lookup(layers[i]!.tree, key.toLowerCase().split('.'));
      if (value !== undefined && value !== null) return { value, source: layers[i]!.file };
    }
    return { value: known.get(key)?.default, source: 'default' };
  };

  let secretValues = new Map<string, string>();
  const resolve = (key: string): { value: unknown; source: string } => {
    const raw = resolveRaw(key);
    if (secretValues.size === 0 || isBackendSetting(key)) return raw;
    const { value, resolved } = substituteHandles(raw.value, secretValues);
    return resolved ? { value, source: `${raw.source} (ENC[] resolved by secret_backend_command)` } : raw;
  };

  const config: AgentConfig = {
    ...(mainFile ? { file: mainFile } : {}),
    files: layers.map((l) => l.file),
    get: (key) => resolve(key).value as ConfigValue | undefined,
    getString(key) {
      // Blank is unset here, as every caller wants; the agent's GetString would give the blank text.
      const text = castToString(resolve(key).value).value.trim();
      return text === '' ? undefined : text;
    },
    getBool: (key) => castToBool(resolve(key).value).value,
    getStringMap(key) {
      const { value, source } = resolve(key);
      const map = typeof value === 'string' ? parseEnvMap(value, source) : ((value ?? {}) as Record<string, unknown>);
      return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, castToString(v).value]));
    },
    sourceOf: (key) => resolve(key).source,
  };

  // Every handle, from the files and from every DD_* variable, for one backend run.
  const handles = new Map<string, string>();
  for (const [name, value] of Object.entries(options.env)) {
    if (name.startsWith('DD_') && !name.startsWith('DD_SECRET_BACKEND') && value)
      collectHandles(value, name.slice(3).toLowerCase(), `env ${name}`, handles);
  }
  for (const layer of layers) collectHandles(layer.tree, '', layer.file, handles);
  if (handles.size === 0 || options.secretsBackend === false) return config;
  try {
    const settings = secretBackendSettings(config);
    // No backend: handles stay, and each use refuses them (credentials.ts) or finds them invalid.
    if (!settings) return config;
    // Sorted: the payload does not depend on the order files and variables were read in.
    secretValues = await resolveSecretHandles([...handles.keys()].sort(), settings, options.env, Object.fromEntries(handles));
  } catch (err) {
    config.secretsFailure = err as Error;
  }
  return config;
}

export function requireRunnerEnabled(config: AgentConfig, looked?: string): void {
  if (!config.getBool('private_action_runner.enabled')) {
    // Nothing read at all: the runner is not known to be disabled, its config was not found.
    // `looked`: the caller read (or looked for) a local config; the settings of an agent read from its
    // Deployment need no file (Helm's env alone), and say themselves whether the runner is enabled.
    if (looked !== undefined && config.files.length === 0 && config.sourceOf('private_action_runner.enabled') === 'default') {
      throw new ConfigError(
        'CONFIG_NOT_FOUND',
        `no agent config found${looked ? ` (looked for ${looked})` : ''}, and DD_PRIVATE_ACTION_RUNNER_ENABLED is not set: nothing says this runner is enabled`,
        "Nothing was changed. Point -c at the agent's config directory (or its .yaml file), " +
          "or run where the agent's DD_* environment is set (--env-from-runner on the runner's host).",
        looked ? { looked } : {},
      );
    }
    const raw = config.get('private_action_runner.enabled');
    // "yes" in quotes, or in DD_*, is a string the agent's GetBool cannot parse: say what was read.
    const read =
      typeof raw === 'boolean' || raw === undefined || raw === null
        ? 'false'
        : `${sanitizeServerString(JSON.stringify(raw), 80)}, which the agent reads as false`;
    throw new ConfigError(
      'RUNNER_DISABLED',
      `private_action_runner.enabled is ${read} (from ${config.sourceOf('private_action_runner.enabled')})`,
      'Rotation is refused for a runner that is not enabled: set private_action_runner.enabled: ' +
        'true in the agent config (or DD_PRIVATE_ACTION_RUNNER_ENABLED=true), then run again.',
    );
  }
}
