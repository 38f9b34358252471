import { badRequest } from './status-errors.js';

type LabelOp = 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';
export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

/** Splits on commas that are not inside parentheses: `a in (x,y),b` has two requirements. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

const LABEL_KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, whole: string): void {
  if (!LABEL_KEY.test(key)) throw badRequest(`unable to parse requirement: invalid label key "${key}" in "${whole}"`);
}

function checkValue(value: string): void {
  if (!LABEL_VALUE.test(value) || value.length > 63) throw badRequest(`unable to parse requirement: invalid label value: "${value}"`);
}

export function parseLabelSelector(text: string | null | undefined): LabelRequirement[] {
  if (!text) return [];
  const out: LabelRequirement[] = [];
  for (const part of splitTopLevel(text)) {
    let m = /^!\s*(\S+)$/.exec(part);
    if (m) {
      checkKey(m[1]!, part);
      out.push({ key: m[1]!, op: '!', values: [] });
      continue;
    }
    m = /^(\S+?)\s+(in|notin)\s*\((.*)\)$/.exec(part);
    if (m) {
      checkKey(m[1]!, part);
      const values = m[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      for (const v of values) checkValue(v);
      out.push({ key: m[1]!, op: m[2] as 'in' | 'notin', values });
      continue;
    }
    m = /^([^=!<>\s]+)\s*(==|=|!=|<|>)\s*(.*)$/.exec(part);
    if (m) {
      checkKey(m[1]!, part);
      const value = m[3]!.trim();
      const op = m[2]!;
      if (op === '<' || op === '>') {
        if (!/^-?\d+$/.test(value)) throw badRequest(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`);
        out.push({ key: m[1]!, op: op === '<' ? 'lt' : 'gt', values: [value] });
      } else {
        checkValue(value);
        out.push({ key: m[1]!, op: op === '!=' ? '!=' : '=', values: [value] });
      }
      continue;
    }
    if (/^\S+$/.test(part)) {
      checkKey(part, part);
      out.push({ key: part, op: 'exists', values: [] });
      continue;
    }
    throw badRequest(`unable to parse requirement: found '${part}', expected: ',', or end of string`);
  }
  return out;
}

export function labelsMatch(reqs: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'exists':
        return has;
      case '!':
        return !has;
      case '=':
        return has && v === r.values[0];
      case '!=':
        return !has || v !== r.values[0];
      case 'in':
        return has && r.values.includes(v!);
      case 'notin':
        return !has || !r.values.includes(v!);
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        return r.op === 'gt' ? n > bound : n < bound;
      }
    }
    return false;
  });
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** Field selector values may escape `,`, `=`, `!` and `\` with a backslash (fields.EscapeValue). */
function splitUnescaped(text: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) {
      cur += ch + text[i + 1];
      i++;
    } else if (ch === sep) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

function unescapeValue(v: string): string {
  return v.replace(/\\(.)/g, '$1');
}

export function parseFieldSelector(text: string | null | undefined): FieldRequirement[] {
  if (!text) return [];
  const out: FieldRequirement[] = [];
  for (const raw of splitUnescaped(text, ',')) {
    const part = raw.trim();
    if (!part) continue;
    const m = /^([^=!]+?)\s*(!=|==|=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    out.push({ field: m[1]!.trim(), op: m[2] === '!=' ? '!=' : '=', value: unescapeValue(m[3]!) });
  }
  return out;
}

/** `(name, true)` when the selector pins metadata.name, as fields.Selector.RequiresExactMatch does. */
export function exactName(reqs: FieldRequirement[]): string | undefined {
  const eq = reqs.filter((r) => r.field === 'metadata.name' && r.op === '=');
  return eq.length === 1 ? eq[0]!.value : undefined;
}

export function fieldsMatch(reqs: FieldRequirement[], fields: Record<string, string>): boolean {
  return reqs.every((r) => {
    const v = fields[r.field] ?? '';
    return r.op === '=' ? v === r.value : v !== r.value;
  });
}
