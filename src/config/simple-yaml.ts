// The fast path of the agent YAML reader (agent-yaml.ts) for what an agent config is nearly always
// written in: block mappings and block sequences of one-line scalars, with comments. Loading the yaml
// library and building its document model costs about 100 ms and 40 MB before the first key is read,
// and 0.7 s for a 50 000-key file; this reads such a file in one pass over its lines, allocating only
// the result.
//
// It is an accelerator, never a second dialect: the moment a line steps outside the subset (anchors,
// tags, flow collections, block scalars, multi-line or escaped scalars, tabs, directives, repeated
// keys, anything odd) it returns undefined and the caller reads the whole file by the library path,
// which also produces the precise error. Scalars resolve with yaml-scalar.ts, the rules both paths
// share, and a differential test checks both give the same tree.

import { resolvePlainScalar } from './yaml-scalar.js';

type Tree = Record<string, unknown>;

/** Returned by a scalar reader when the text is outside the subset. */
const OUTSIDE = Symbol('outside');

/** What may follow a closing quote or a plain scalar: spaces, then a comment or nothing. */
const TRAILER = /^ *(?:#.*)?$/;

/** One scalar on one line (the rest of the line after `key: ` or `- `), or OUTSIDE. */
function readScalar(rest: string): unknown {
  const first = rest[0];
  if (first === '"') {
    const close = rest.indexOf('"', 1);
    const body = rest.slice(1, close);
    // Escapes (\n, \u…) are the library's business.
    if (close < 0 || body.includes('\\') || !TRAILER.test(rest.slice(close + 1))) return OUTSIDE;
    return body;
  }
  if (first === "'") {
    let i = 1;
    let body = '';
    for (;;) {
      const close = rest.indexOf("'", i);
      if (close < 0) return OUTSIDE;
      body += rest.slice(i, close);
      if (rest[close + 1] !== "'") {
        i = close + 1;
        break;
      }
      body += "'";
      i = close + 2;
    }
    return TRAILER.test(rest.slice(i)) ? body : OUTSIDE;
  }
  // A plain scalar: ends at " #" (a comment); must not start with an indicator, nor hold ": " or end
  // in ":" (a nested mapping on one line, an error), nor be "- …" (a sequence on the key's line).
  const hash = rest.search(/ #/);
  const plain = (hash < 0 ? rest : rest.slice(0, hash)).trimEnd();
  if (plain === '') return null;
  if (/^[[\]{}#&*!|>'"%@`,?:]/.test(plain) || /^-(?: |$)/.test(plain)) return OUTSIDE;
  if (plain.includes(': ') || plain.endsWith(':')) return OUTSIDE;
  return resolvePlainScalar(plain);
}

interface Line {
  indent: number;
  text: string;
}

/** Content lines (no blank or comment lines), or undefined for a tab, \r, control character or directive. */
function contentLines(source: string): Line[] | undefined {
  const text = source.startsWith('\uFEFF') ? source.slice(1) : source;
  // Tabs and carriage returns have rules of their own; control characters are errors to report.
  if (/[\t\r\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text)) return undefined;
  const lines: Line[] = [];
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let first = start;
    while (first < end && text.charCodeAt(first) === 32) first++;
    if (first < end && text.charCodeAt(first) !== 35 /* # */) {
      // Document markers and directives (%YAML 1.1 changes the schema): the library's business.
      if (first === start && (text.startsWith('---', start) || text.startsWith('...', start) || text[start] === '%')) return undefined;
      let last = end;
      while (text.charCodeAt(last - 1) === 32) last--;
      lines.push({ indent: first - start, text: text.slice(first, last) });
    }
    start = end + 1;
  }
  return lines;
}

/** A plain key the schema keeps as a string, followed by ":" and a space or the end of the line. */
const KEY = /^([A-Za-z_][A-Za-z0-9_.\-/]*):(?: (.*)|$)/;

class Outside extends Error {}

/** Deeper nesting than any agent config has: leave it to the library rather than recurse further. */
const MAX_DEPTH = 64;

/**
 * Parses `source` if it is inside the subset, else returns undefined (parse it with the library then).
 * An empty document gives null, as the library's toJS does.
 */
export function parseSimpleYaml(source: string): Tree | null | undefined {
  const lines = contentLines(source);
  if (!lines) return undefined;
  if (lines.length === 0) return null;
  if (lines[0]!.indent !== 0) return undefined;
  let at = 0;

  const readSeq = (indent: number): unknown[] => {
    const items: unknown[] = [];
    while (at < lines.length && lines[at]!.indent === indent && lines[at]!.text.startsWith('- ')) {
      const value = readScalar(lines[at]!.text.slice(2).trimStart());
      if (value === OUTSIDE || value === null) throw new Outside();
      items.push(value);
      at++;
    }
    return items;
  };

  const readMap = (indent: number, depth: number): Tree => {
    if (depth > MAX_DEPTH) throw new Outside();
    // No prototype: a key named like an Object method is just a key, and inserts are cheaper.
    const map: Tree = Object.create(null) as Tree;
    while (at < lines.length && lines[at]!.indent >= indent) {
      const line = lines[at]!;
      if (line.indent !== indent) throw new Outside();
      const match = KEY.exec(line.text);
      if (!match) throw new Outside();
      const key = match[1]!;
      if (resolvePlainScalar(key) !== key || Object.hasOwn(map, key) || key === '__proto__') throw new Outside();
      at++;
      const rest = match[2]?.trimStart() ?? '';
      if (rest !== '' && rest[0] !== '#') {
        const value = readScalar(rest);
        if (value === OUTSIDE) throw new Outside();
        map[key] = value;
        // A more indented line after a scalar continues it (a multi-line plain scalar) or is an error.
        if (at < lines.length && lines[at]!.indent > indent) throw new Outside();
        continue;
      }
      const next = lines[at];
      if (next && next.indent >= indent && next.text.startsWith('- ')) map[key] = readSeq(next.indent);
      else if (next && next.indent > indent) map[key] = readMap(next.indent, depth + 1);
      else map[key] = null;
    }
    return map;
  };

  try {
    const tree = readMap(0, 0);
    return at === lines.length ? tree : undefined;
  } catch (err) {
    if (err instanceof Outside) return undefined;
    throw err;
  }
}
