import type { Alias, Document, LineCounter, Node as YamlNode, Scalar } from 'yaml';
import { ConfigError } from '../errors.js';
import { commonJs } from '../lazy-module.js';
import { formatGoFloat } from './agent-values.js';
import { parseSimpleYaml } from './simple-yaml.js';
import { resolvePlainScalar, resolvePlainTagged, resolveTaggedScalar } from './yaml-scalar.js';

// The one reader of datadog.yaml and the -E files: the tree the Go agent's yaml.v2 v2.4.0 decodes
// (pkg/config/nodetreemodel/read_config_file.go: readConfigurationContent unmarshals into a
// map[string]interface{}, strictly, then leniently when strict decoding fails). Two paths, one reader:
// the one-pass fast path (simple-yaml.ts) for the plain block mappings nearly every config is, and
// the yaml library's parser for everything else, its nodes then decoded here with yaml.v2's rules
// (decode.go) instead of the library's YAML 1.2 ones. Both resolve scalars with yaml-scalar.ts;
// test/unit/simple-yaml.test.ts proves they give the same tree, and test/unit/agent-yaml.test.ts
// holds the table of what the agent reads (docs/config-yaml.md).

type Tree = Record<string, unknown>;

/** yaml.v2's limit on nesting (decode.go and parserc.go refuse deeper documents). */
const MAX_DEPTH = 10_000;

/**
 * yaml.v2 v2.4.0's alias bound (decode.go, unmarshal and allowedAliasRatio): past 100 alias-driven
 * decodes in a document of more than 1000, aliases may drive at most 99% of the decodes of a small
 * document, falling to 10% from 4 000 000 decodes: a "billion laughs" file is refused, not expanded.
 */
// exported for tests: yaml.v2's alias bound, checked at its edges
export function excessiveAliasing(aliasDecodes: number, decodes: number): boolean {
  if (aliasDecodes <= 100 || decodes <= 1000) return false;
  const low = 400_000;
  const high = 4_000_000;
  const allowed = decodes <= low ? 0.99 : decodes >= high ? 0.1 : 0.99 - (0.89 * (decodes - low)) / (high - low);
  return aliasDecodes / decodes > allowed;
}

/**
 * Characters yaml.v2's reader refuses anywhere in the file ("control characters are not allowed"):
 * all but tab, LF, CR, printable ASCII, NEL, U+00A0–U+D7FF, U+E000–U+FFFD and the astral planes.
 */
const NOT_ALLOWED = /[^\t\n\r\x20-\x7e\x85\u00a0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/** Decodes the file's bytes as yaml.v2 does: UTF-16 when it starts with that BOM, else UTF-8, strictly. */
export function decodeYamlBytes(path: string, bytes: Uint8Array): string {
  const yamlError = (message: string) =>
    new ConfigError(
      'CONFIG_YAML',
      `${path}: invalid YAML: ${message}`,
      'Save the file as UTF-8 (the agent would refuse it too), then run again.',
      { file: path },
    );
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return Buffer.from(bytes.subarray(2)).toString('utf16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    if (bytes.length % 2 !== 0) throw yamlError('incomplete UTF-16 character');
    return Buffer.from(bytes.subarray(2)).swap16().toString('utf16le');
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw yamlError('invalid UTF-8');
  }
}

/** Line (1-based) of a source offset. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at >= 0 && at < offset; at = text.indexOf('\n', at + 1)) line++;
  return line;
}

function yamlError(path: string, message: string, line: number | undefined): ConfigError {
  return new ConfigError(
    'CONFIG_YAML',
    `${path}${line ? `:${line}` : ''}: invalid YAML: ${message}`,
    'Fix the YAML at that line (the agent would refuse it too), then run again.',
    { file: path, line },
  );
}

/** The tree yaml.v2 gives the agent for `text` (the file at `path`, named in errors). */
export async function readAgentYaml(path: string, text: string): Promise<Tree> {
  const refused = NOT_ALLOWED.exec(text);
  if (refused)
    throw yamlError(
      path,
      `control characters are not allowed (U+${refused[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`,
      lineOf(text, refused.index),
    );
  // Most agent configs are plain block mappings: read those in one pass; anything else, and every
  // error, goes through the library below.
  const simple = parseSimpleYaml(text);
  if (simple !== undefined) return simple ?? {};
  return decodeWithLibrary(path, text, commonJs(await import('yaml'))).tree;
}

type YamlModule = typeof import('yaml');

class Decoder {
  decodes = 0;
  aliasDecodes = 0;
  private aliasDepth = 0;
  private readonly expanding = new Set<Alias>();

  constructor(
    private readonly yaml: YamlModule,
    private readonly targets: Map<Alias, YamlNode | undefined>,
    private readonly fail: (message: string, node: YamlNode | null | undefined, code?: 'CONFIG_YAML_ALIASES') => never,
    private readonly text: string,
  ) {}

  /** decode.go, unmarshal: every node decoded counts, and those reached through an alias count twice. */
  private count(node: YamlNode): void {
    this.decodes++;
    if (this.aliasDepth > 0) this.aliasDecodes++;
    if (excessiveAliasing(this.aliasDecodes, this.decodes))
      this.fail('document contains excessive aliasing (a YAML "billion laughs" document)', node, 'CONFIG_YAML_ALIASES');
  }

  /** The node an alias stands for (the caller counted the alias node; its anchor's node counts again). */
  private through<T>(node: YamlNode, depth: number, use: (target: YamlNode) => T): T {
    if (!this.yaml.isAlias(node)) return use(node);
    const target = this.targets.get(node);
    if (!target)
      this.fail(
        `unknown anchor '${node.source}' referenced (Unresolved alias: the anchor must come before it)`,
        node,
        'CONFIG_YAML_ALIASES',
      );
    if (this.expanding.has(node)) this.fail(`anchor '${node.source}' value contains itself`, node, 'CONFIG_YAML_ALIASES');
    if (depth > MAX_DEPTH) this.fail(`exceeded max depth of ${MAX_DEPTH}`, node);
    this.expanding.add(node);
    this.aliasDepth++;
    try {
      this.count(target!);
      return this.through(target!, depth + 1, use);
    } finally {
      this.aliasDepth--;
      this.expanding.delete(node);
    }
  }

  private scalar(node: Scalar): unknown {
    const text = String(node.value ?? '');
    if (node.type === 'QUOTE_DOUBLE') this.checkEscapes(node);
    if (node.tag) {
      const value = resolveTaggedScalar(node.tag, text);
      if (value instanceof Error) this.fail(value.message, node);
      return value;
    }
    // An untagged quoted or block scalar is a string; only a plain one is resolved (decode.go, scalar).
    return node.type === 'PLAIN' ? resolvePlainScalar(text) : text;
  }

  /** YAML 1.2 added the `\/` escape, which yaml.v2 (YAML 1.1) rejects. */
  private checkEscapes(node: Scalar): void {
    const [start, end] = node.range ?? [0, 0];
    const raw = this.text.slice(start, end);
    for (const m of raw.matchAll(/\\(.)/gsu)) if (m[1] === '/') this.fail('found unknown escape character', node);
  }

  value(node: YamlNode | null | undefined, depth: number): unknown {
    if (!node) return null;
    if (depth > MAX_DEPTH) this.fail(`exceeded max depth of ${MAX_DEPTH}`, node);
    this.count(node);
    return this.through(node, depth, (target) => {
      const { yaml } = this;
      if (yaml.isScalar(target)) return this.scalar(target);
      if (yaml.isSeq(target)) return target.items.map((item) => this.value(item as YamlNode, depth + 1));
      if (yaml.isMap(target)) return this.mapInto(target, Object.create(null) as Tree, false, depth);
      this.fail('unexpected node', target);
    });
  }

  /** Map keys: at the top the agent decodes into map[string]interface{} (a key is its text); below,
   * into map[interface{}]interface{}, whose keys ToMapStringInterface prints with %v. */
  private key(node: YamlNode | null | undefined, topLevel: boolean, depth: number): string {
    if (!node) return topLevel ? '' : '<nil>';
    this.count(node);
    return this.through(node, depth, (target) => {
      if (!this.yaml.isScalar(target)) this.fail('invalid map key: a mapping or a sequence', target);
      const text = String(target.value ?? '');
      if (target.tag) {
        const value = this.scalar(target);
        return topLevel ? (value === null ? '' : text) : goPrint(value, resolvePlainTagged(text)[0] === 'float');
      }
      if (target.type !== 'PLAIN') return text;
      const [tag, value] = resolvePlainTagged(text);
      if (topLevel) return value === null ? '' : text;
      return goPrint(value, tag === 'float');
    });
  }

  private isMergeKey(node: YamlNode | null | undefined): boolean {
    const { yaml } = this;
    return yaml.isScalar(node) && node.value === '<<' && ((node.type === 'PLAIN' && !node.tag) || node.tag === 'tag:yaml.org,2002:merge');
  }

  /** decode.go, mapping: pairs in order, a repeated key overwriting the earlier one (the lenient pass). */
  mapInto(node: YamlNode, out: Tree, topLevel: boolean, depth: number): Tree {
    const { yaml } = this;
    if (!yaml.isMap(node)) this.fail('map merge requires map or sequence of maps as the value', node);
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode | null;
      const valueNode = pair.value as YamlNode | null;
      if (this.isMergeKey(keyNode)) {
        this.merge(valueNode, out, topLevel, depth + 1);
        continue;
      }
      const key = this.key(keyNode, topLevel, depth + 1);
      const value = this.value(valueNode, depth + 1);
      // An own property, whatever the key: "__proto__" is a key like any other.
      Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
    }
    return out;
  }

  /** decode.go, merge: the merged map's keys are set where `<<` stands (later keys overwrite them, and
   * they overwrite earlier keys); from a sequence, the earlier maps take precedence. */
  private merge(node: YamlNode | null, out: Tree, topLevel: boolean, depth: number): void {
    const { yaml } = this;
    const asMap = (n: YamlNode) => {
      this.count(n);
      this.through(n, depth, (target) => this.mapInto(target, out, topLevel, depth + 1));
    };
    // The sequence itself is not decoded, only its maps.
    if (yaml.isSeq(node)) {
      for (const item of [...node.items].reverse()) asMap(item as YamlNode);
    } else if (node) asMap(node);
    else this.fail('map merge requires map or sequence of maps as the value', node);
  }
}

/** fmt's %v of a decoded key: how the agent's ToMapStringInterface names a key that is not a string. */
function goPrint(value: unknown, isFloat: boolean): string {
  if (value === null) return '<nil>';
  if (typeof value !== 'number') return String(value);
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (!isFloat) return String(value);
  // %v of a float64 is %g with the shortest digits: an exponent below 1e-4 and from 1e6.
  const [mantissa, exp] = value.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 6) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return formatGoFloat(value);
}

/** The library path: the tree, and how many nodes yaml.v2 would decode for it (tests: linear in size). */
// exported for tests: the tests count its decodes (linear in size)
export function decodeWithLibrary(path: string, text: string, yaml: YamlModule): { tree: Tree; decodes: number } {
  let lineCounter: LineCounter = new yaml.LineCounter();
  const parse = (source: string) => {
    lineCounter = new yaml.LineCounter();
    const docs = yaml.parseAllDocuments(source, { prettyErrors: false, lineCounter, uniqueKeys: false, merge: false, schema: 'failsafe' });
    // yaml.v2's Unmarshal decodes the first document and never reads past it.
    return (Array.isArray(docs) ? docs[0] : undefined) as Document.Parsed | undefined;
  };
  let source = text;
  let doc = parse(source);
  if (!doc) return { tree: {}, decodes: 0 };
  // `\'` in double quotes is YAML 1.1's escaped quote, which YAML 1.2 dropped: spelled `\x27` for the
  // library (same line, so every reported line stays right).
  const quoteEscapes = doc.errors.filter((e) => e.code === 'BAD_DQ_ESCAPE' && source.startsWith("\\'", e.pos[0])).map((e) => e.pos[0]);
  if (quoteEscapes.length > 0) {
    let patched = '';
    let from = 0;
    for (const at of quoteEscapes) {
      patched += `${source.slice(from, at)}\\x27`;
      from = at + 2;
    }
    source = patched + source.slice(from);
    doc = parse(source)!;
  }
  const first = doc.errors[0];
  if (first) throw yamlError(path, first.message.split('\n')[0]!, first.linePos?.[0]?.line ?? lineCounter.linePos(first.pos[0]).line);
  const directive = doc.directives?.yaml;
  if (directive?.explicit && directive.version !== '1.1')
    throw yamlError(path, `found incompatible YAML document (%YAML ${directive.version}; the agent reads YAML 1.1)`, 1);

  // Anchors in document order: an alias is the latest anchor of its name before it (parserc.go).
  const targets = new Map<Alias, YamlNode | undefined>();
  const anchors = new Map<string, YamlNode>();
  const walk = (node: unknown): void => {
    if (yaml.isAlias(node)) {
      targets.set(node, anchors.get(node.source));
      return;
    }
    if (!yaml.isNode(node)) return;
    if (node.anchor) anchors.set(node.anchor, node);
    if (yaml.isMap(node)) {
      for (const pair of node.items) {
        walk(pair.key);
        walk(pair.value);
      }
    } else if (yaml.isSeq(node)) for (const item of node.items) walk(item);
  };
  walk(doc.contents);

  const fail = (message: string, node: YamlNode | null | undefined, code: 'CONFIG_YAML' | 'CONFIG_YAML_ALIASES' = 'CONFIG_YAML'): never => {
    const offset = node?.range?.[0];
    const line = offset === undefined ? undefined : lineCounter.linePos(offset).line;
    if (code === 'CONFIG_YAML') throw yamlError(path, message, line);
    throw new ConfigError(
      'CONFIG_YAML_ALIASES',
      `${path}${line ? `:${line}` : ''}: invalid YAML: ${message}`,
      'The file was not loaded (the agent would refuse it too). An agent config needs no deeply nested aliases: write the values out, then run again.',
      { file: path },
    );
  };
  const decoder = new Decoder(yaml, targets, fail, source);
  const root = doc.contents as YamlNode | null;
  // decode.go, document: the document node is one decode, its root another.
  decoder.decodes++;
  if (root === null || (yaml.isScalar(root) && root.type === 'PLAIN' && !root.tag && resolvePlainScalar(String(root.value ?? '')) === null))
    return { tree: {}, decodes: decoder.decodes };
  if (!yaml.isMap(root))
    throw new ConfigError('CONFIG_YAML', `${path}: the top level is not a mapping`, 'An agent config file is a YAML mapping of keys.', {
      file: path,
    });
  decoder.decodes++;
  const tree = decoder.mapInto(root, Object.create(null) as Tree, true, 0);
  return { tree, decodes: decoder.decodes };
}
