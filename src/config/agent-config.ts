import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { commonJs } from '../lazy-module.js';
import { CONFIG_KEYS, type ConfigKey, envNameOf } from './config-keys.js';
import { parseSimpleYaml } from './simple-yaml.js';
import { findDuplicateKey } from './yaml-keys.js';

// Loads the agent's YAML config the way the Go agent does: main file, then -E extra files merged
// over it, then DD_* environment variables over both, then the defaults of protocol §9.

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
}

interface LoadConfigOptions {
  /** Directory holding the config, or a .yaml file path. */
  cfgPath: string;
  extraFiles?: string[];
  env: NodeJS.ProcessEnv;
  /** Candidate file names in the directory, first existing wins (cluster agent: datadog-cluster.yaml first). */
  fileNames?: string[];
}

type Tree = Record<string, unknown>;

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function findMainFile(cfgPath: string, fileNames: string[]): Promise<string | undefined> {
  if (/\.ya?ml$/.test(cfgPath)) {
    if (await isFile(cfgPath)) return cfgPath;
    throw new ConfigError('CONFIG_UNREADABLE', `config file ${cfgPath} does not exist`, 'Check the path given with -c (a directory holding datadog.yaml, or the .yaml file itself).', { file: cfgPath });
  }
  for (const name of fileNames) {
    const candidate = join(cfgPath, name);
    if (await isFile(candidate)) return candidate;
  }
  return undefined;
}

/** At most this many alias expansions per document: a "billion laughs" file is refused, not expanded. */
export const MAX_YAML_ALIASES = 100;

async function parseYamlFile(path: string): Promise<Tree> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError('CONFIG_UNREADABLE', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`, 'Check the path given with -c/-E and its permissions.', { file: path });
  }
  // Most agent configs are plain block mappings: read those in one pass; anything else, and every
  // error, goes through the yaml library below.
  const simple = parseSimpleYaml(text);
  if (simple !== undefined) return simple ?? {};
  return parseWithLibrary(path, text);
}

async function parseWithLibrary(path: string, text: string): Promise<Tree> {
  const yaml = commonJs(await import('yaml'));
  const { LineCounter, parseDocument } = yaml;
  // Without prettyErrors the errors carry no linePos: a LineCounter maps the offset to a line.
  const lineCounter = new LineCounter();
  const yamlError = (message: string, line: number | undefined) =>
    new ConfigError('CONFIG_YAML', `${path}${line ? `:${line}` : ''}: invalid YAML: ${message}`, 'Fix the YAML at that line (the agent would refuse it too), then run again.', { file: path, line });
  // uniqueKeys is checked by findDuplicateKey in linear time (the library's own check is quadratic).
  const doc = parseDocument(text, { prettyErrors: false, lineCounter, uniqueKeys: false });
  const first = doc.errors[0];
  if (first) throw yamlError(first.message.split('\n')[0]!, first.linePos?.[0]?.line ?? lineCounter.linePos(first.pos[0]).line);
  const duplicate = findDuplicateKey(doc.contents, yaml).duplicateAt;
  if (duplicate !== undefined) throw yamlError('Map keys must be unique', lineCounter.linePos(duplicate).line);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) as unknown;
  } catch (err) {
    // The library signals an alias bomb (and an alias to an undefined anchor) with a ReferenceError.
    if (!(err instanceof ReferenceError)) throw err;
    throw new ConfigError(
      'CONFIG_YAML_ALIASES',
      `${path}: invalid YAML: ${/Excessive alias count/.test(err.message) ? `aliases expand beyond ${MAX_YAML_ALIASES} nodes (a YAML "billion laughs" document)` : err.message.split('\n')[0]}`,
      'The file was not loaded. An agent config needs no deeply nested aliases: write the values out, then run again.',
      { file: path },
    );
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError('CONFIG_YAML', `${path}: the top level is not a mapping`, 'An agent config file is a YAML mapping of keys.', { file: path });
  }
  return value as Tree;
}

function lookup(tree: Tree, key: string): unknown {
  let node: unknown = tree;
  for (const part of key.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Tree)[part];
  }
  return node;
}

function parseBool(raw: unknown, where: string): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'number') return raw !== 0;
  const text = String(raw).trim().toLowerCase();
  if (['1', 't', 'true', 'yes', 'on'].includes(text)) return true;
  if (['0', 'f', 'false', 'no', 'off', ''].includes(text)) return false;
  throw new ConfigError('CONFIG_VALUE', `${where} is ${JSON.stringify(raw)}, expected true or false`, 'Set it to true or false.');
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
  const mainFile = await findMainFile(options.cfgPath, fileNames);
  const layers: { file: string; tree: Tree }[] = [];
  if (mainFile) layers.push({ file: mainFile, tree: await parseYamlFile(mainFile) });
  for (const extra of options.extraFiles ?? []) {
    if (!(await isFile(extra))) {
      throw new ConfigError('CONFIG_UNREADABLE', `extra config file ${extra} does not exist`, 'Check the path given with -E.', { file: extra });
    }
    layers.push({ file: extra, tree: await parseYamlFile(extra) });
  }
  const known = new Map<string, ConfigKey>(CONFIG_KEYS.map((k) => [k.key, k]));
  const envNames = (key: string): string[] => [envNameOf(key), ...(known.get(key)?.aliases ?? [])];

  const resolve = (key: string): { value: unknown; source: string } => {
    for (const name of envNames(key)) {
      const raw = options.env[name];
      // The Go agent skips empty variables (`ok && value != ""`), so DD_X= does not hide the file.
      if (raw !== undefined && raw !== '') return { value: raw, source: `env ${name}` };
    }
    for (let i = layers.length - 1; i >= 0; i--) {
      const value = lookup(layers[i]!.tree, key);
      if (value !== undefined && value !== null) return { value, source: layers[i]!.file };
    }
    return { value: known.get(key)?.default, source: 'default' };
  };

  return {
    ...(mainFile ? { file: mainFile } : {}),
    files: layers.map((l) => l.file),
    get: (key) => resolve(key).value as ConfigValue | undefined,
    getString(key) {
      const { value } = resolve(key);
      if (value === undefined || value === null) return undefined;
      const text = String(value).trim();
      return text === '' ? undefined : text;
    },
    getBool(key) {
      const { value, source } = resolve(key);
      return parseBool(value ?? false, `${key} (from ${source})`);
    },
    getStringMap(key) {
      const { value, source } = resolve(key);
      const map = typeof value === 'string' ? parseEnvMap(value, source) : ((value ?? {}) as Record<string, unknown>);
      return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, String(v)]));
    },
    sourceOf: (key) => resolve(key).source,
  };
}

export function requireRunnerEnabled(config: AgentConfig): void {
  if (!config.getBool('private_action_runner.enabled')) {
    throw new ConfigError(
      'RUNNER_DISABLED',
      `private_action_runner.enabled is false (from ${config.sourceOf('private_action_runner.enabled')})`,
      'Rotation is refused for a runner that is not enabled: set private_action_runner.enabled: true in the agent config (or DD_PRIVATE_ACTION_RUNNER_ENABLED=true), then run again.',
    );
  }
}
