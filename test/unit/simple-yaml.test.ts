import * as yaml from 'yaml';
import { describe, expect, it } from 'vitest';
import { decodeWithLibrary } from '../../src/config/agent-yaml.js';
import { parseSimpleYaml } from '../../src/config/simple-yaml.js';

// The fast path must be invisible: on every document it accepts, it gives exactly the tree of the
// reader's library path (agent-yaml.ts); every document that path rejects, it leaves to it (returns
// undefined). What both read is the agent's reading: test/unit/agent-yaml.test.ts.

function library(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: decodeWithLibrary('f', text, yaml).tree };
  } catch {
    return { ok: false };
  }
}

function expectSameAsLibrary(text: string): void {
  const fast = parseSimpleYaml(text);
  const lib = library(text);
  if (!lib.ok) {
    expect(fast, text).toBeUndefined();
    return;
  }
  if (fast !== undefined) expect(fast ?? {}, text).toEqual(lib.value);
}

describe('parseSimpleYaml accepts the usual agent config and agrees with the library path', () => {
  const INSIDE = [
    '',
    '# only a comment\n\n',
    'api_key: 0123456789abcdef\nsite: datadoghq.eu\n',
    'a: 1\nb: -2\nc: +3\nd: 0o17\ne: 0x1F\nf: 1.5\ng: .5\nh: 5.\ni: 1e3\nj: -.inf\nk: .NaN\nl: ~\nm: null\nq: True\no: FALSE\np:\n',
    'a: tRUE\nb: nULL\nc: 0O17\nd: 0X1F\ne: 1_000\nf: 12:30\ng: yes\nh: off\n',
    'a: y\nb: N\nc: On\nd: 0755\ne: 08\nf: 0b101\ng: 2024-01-02\nh: .5_0\ni: -0\nj: +0x1F\n',
    "a: 'it''s'\nb: \"x # y\"\nc: a#b\nd: a # comment\ne: ''\nf: \"\"\ng: 'x' # c\n",
    'url: http://proxy.example:3128/path?x=1\nlist: a,b\nbr: a[0]\n',
    'private_action_runner:\n  enabled: true\n  self_enroll: false\n  urn: urn:dd:apps:on-prem-runner:us1:1:runner-x\n',
    'proxy:\n  https: http://p:3128\n  no_proxy:\n    - localhost\n    - 127.0.0.1\nnext: 1\n',
    'no_proxy:\n- a\n- b\nother: x\n',
    'a:\n  b:\n    c:\n      d: deep\n  e: 2\nf: 3\n',
    'a: # comment\n  b: 1\n',
    'a:\n# comment between\n  b: 1\n',
    '\uFEFFa: 1\n',
    'a: 1   \n',
    'constructor: 1\ntoString: x\nhas.dots: 1\nhas-dash: 2\npath/like: 3\n',
  ];
  it.each(INSIDE)('%j', (text) => {
    const fast = parseSimpleYaml(text);
    expect(fast === undefined ? 'library' : 'fast path', text).toBe('fast path');
    const lib = library(text);
    expect(lib.ok).toBe(true);
    // An empty document is an empty mapping to the agent (the fast path says null: nothing read).
    expect(fast ?? {}).toEqual(lib.ok ? lib.value : undefined);
  });
});

describe('parseSimpleYaml leaves everything else to the library path', () => {
  const OUTSIDE = [
    'a: &x 1\nb: *x\n',
    'a: !!str 1\n',
    'a: [1, 2]\n',
    'a: {b: 1}\n',
    'a: |\n  text\n',
    'a: >-\n  text\n',
    'a: plain\n  continued\n',
    'a: "escaped\\n"\n',
    "a: 'unterminated\n",
    'a: 1\na: 2\n',
    'a:\tb\n',
    'a: 1\r\n',
    '%YAML 1.1\n---\na: yes\n',
    '---\na: 1\n',
    'a: b: c\n',
    'a: b:\n',
    'a: - b\n',
    '- a\n- b\n',
    'just a scalar\n',
    '  a: 1\n',
    'a:\n  - b: 1\n',
    'a:\n  - - b\n',
    'a:\n  -\n',
    'true: 1\n',
    'null: 1\n',
    '1: x\n',
    '"quoted": 1\n',
    '? complex\n: key\n',
    '__proto__: 1\n',
    'a:\n    b: 1\n  c: 2\n',
    'a: @reserved\n',
    'a: `reserved\n',
    'a: bell\u0007\n',
    'key:value\n',
    'a :1\n',
  ];
  it.each(OUTSIDE)('%j', (text) => {
    expect(parseSimpleYaml(text), text).toBeUndefined();
  });

  it('refuses nesting deeper than any config rather than recursing without bound', () => {
    const deep = Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n');
    expect(parseSimpleYaml(deep)).toBeUndefined();
    expect(parseSimpleYaml(Array.from({ length: 20 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n'))).toBeDefined();
  });
});

/** A small deterministic generator (mulberry32): the same documents on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = [
  'api_key',
  'site',
  'a',
  'b.c',
  'd-e',
  'f/g',
  '_h',
  'True',
  'null',
  '1',
  'x y',
  'k:',
  '"q"',
  'constructor',
  'a',
  'y',
  'on',
  'Site',
  '0x1F',
];
const VALUES = [
  'v',
  'value-1',
  '1',
  '-2',
  '0o7',
  '0x1F',
  '0755',
  '08',
  'y',
  'on',
  'OFF',
  '1_0',
  '1e3',
  '1.5',
  '.inf',
  '~',
  'null',
  'true',
  'No',
  "'s''q'",
  '"d q"',
  '"d\\"q"',
  '',
  'a#b',
  'a #c',
  'a: b',
  'a:',
  'a:b',
  '- x',
  '-x',
  '?x',
  '[1]',
  '{a: 1}',
  '&a x',
  '*a',
  '!t x',
  '|',
  '>',
  '@x',
  '`x',
  "'open",
  'http://h:1/p',
  '12:30',
  ' ',
  'x\ty',
];

function randomDocument(next: () => number): string {
  const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)]!;
  const lines: string[] = [];
  const emit = (indent: number, depth: number) => {
    const entries = 1 + Math.floor(next() * 4);
    for (let i = 0; i < entries; i++) {
      const pad = ' '.repeat(indent + (next() < 0.03 ? 1 : 0));
      const key = pick(KEYS);
      const roll = next();
      if (roll < 0.1) lines.push(`${pad}# comment`);
      if (roll < 0.15) lines.push('');
      if (depth < 3 && roll > 0.75) {
        lines.push(`${pad}${key}:${next() < 0.2 ? ' # c' : ''}`);
        emit(indent + 2, depth + 1);
      } else if (depth < 3 && roll > 0.65) {
        lines.push(`${pad}${key}:`);
        const seqIndent = next() < 0.4 ? indent : indent + 2;
        const items = 1 + Math.floor(next() * 3);
        for (let j = 0; j < items; j++) lines.push(`${' '.repeat(seqIndent)}- ${pick(VALUES)}`);
      } else {
        lines.push(`${pad}${key}: ${pick(VALUES)}`);
        if (next() < 0.03) lines.push(`${pad}  continued`);
      }
    }
  };
  emit(0, 0);
  return `${lines.join('\n')}\n`;
}

describe('parseSimpleYaml on 3000 generated documents', () => {
  it('never accepts what the library path rejects, and gives its tree for all it accepts', () => {
    const next = rng(20261203);
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const text = randomDocument(next);
      expectSameAsLibrary(text);
      if (parseSimpleYaml(text) !== undefined) accepted++;
    }
    // The generator must exercise both paths, or this test proves nothing.
    expect(accepted).toBeGreaterThan(100);
    expect(accepted).toBeLessThan(2900);
  });
});
