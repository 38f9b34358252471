import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, EXIT_CODE_DOCS, ExitCode } from '../../src/errors.js';

// The net under the closed code table: every code literal handed to ParError or one of its
// subclasses (directly, in a ternary, or through super() in a subclass) anywhere in src/ must have
// a row, and be thrown with the class and exit status that row names.

const SRC = new URL('../../src/', import.meta.url).pathname;

interface Use {
  file: string;
  line: number;
  code: string;
  /** The class constructed (`new X(`) or the class whose constructor calls super(). */
  via: string;
  /** For `new ParError(CODE, 'exit', …)`: the exit name given. */
  exit?: string;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

/** Names of ParError and every class extending it (transitively), across all files. */
function errorClasses(sources: string[]): Set<string> {
  const names = new Set(['ParError']);
  const extendsRe = /class\s+(\w+)\s+extends\s+(\w+)/g;
  for (let grew = true; grew; ) {
    grew = false;
    for (const text of sources) {
      for (const m of text.matchAll(extendsRe)) {
        if (names.has(m[2]!) && !names.has(m[1]!)) {
          names.add(m[1]!);
          grew = true;
        }
      }
    }
  }
  return names;
}

/** The text of the first argument starting at `from` (up to the first top-level comma or paren). */
function firstArgument(text: string, from: number): string {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const ch = text[i]!;
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) {
      if (depth === 0) return text.slice(from, i);
      depth--;
    } else if (ch === ',' && depth === 0) return text.slice(from, i);
  }
  return text.slice(from);
}

function codeUses(file: string, text: string, classes: Set<string>): Use[] {
  const uses: Use[] = [];
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  const call = /\b(?:new\s+(\w+)|super)\s*\(/g;
  for (const m of text.matchAll(call)) {
    let via = m[1];
    // The exit name follows the code when the call reaches ParError's own constructor.
    let callsParError = via === 'ParError';
    if (via === undefined) {
      // super(): the class whose body this is.
      const before = [...text.slice(0, m.index).matchAll(/class\s+(\w+)\s+extends\s+(\w+)/g)].at(-1);
      if (!before || !classes.has(before[1]!)) continue;
      via = before[1]!;
      callsParError = before[2] === 'ParError';
    } else if (!classes.has(via)) continue;
    const argStart = m.index + m[0].length;
    const first = firstArgument(text, argStart);
    const exitMatch = callsParError ? /^\s*'(\w+)'/.exec(text.slice(argStart + first.length + 1)) : null;
    for (const lit of first.matchAll(/'([A-Z][A-Z0-9_]*)'/g)) {
      uses.push({ file, line: lineOf(m.index), code: lit[1]!, via, ...(exitMatch ? { exit: exitMatch[1]! } : {}) });
    }
  }
  return uses;
}

async function allUses(): Promise<Use[]> {
  const files = await sourceFiles(SRC);
  const texts = await Promise.all(files.map((f) => readFile(f, 'utf8')));
  const classes = errorClasses(texts);
  return files.flatMap((f, i) => codeUses(relative(SRC, f), texts[i]!, classes));
}

const rows = ERROR_CODES as Record<string, { family: string; exit: keyof typeof ExitCode; meaning: string }>;

describe('the error code table is closed', () => {
  it('finds the codes thrown in src/ (the scan itself works)', async () => {
    const uses = await allUses();
    expect(new Set(uses.map((u) => u.code)).size).toBeGreaterThan(40);
    expect(uses).toContainEqual(expect.objectContaining({ code: 'CHILD_START_FAILED', via: 'ChildExitError' }));
    expect(uses).toContainEqual(expect.objectContaining({ code: 'USAGE', via: 'UsageError' }));
    expect(uses).toContainEqual(expect.objectContaining({ code: 'INTERNAL', via: 'ParError', exit: 'internal' }));
    expect(uses).toContainEqual(expect.objectContaining({ code: 'KEYCHAIN_UNAVAILABLE', via: 'KeychainUnavailableError', exit: 'unavailable' }));
  });

  it('every code thrown anywhere in src/ has a row', async () => {
    const missing = (await allUses()).filter((u) => !(u.code in rows)).map((u) => `${u.file}:${u.line} ${u.code}`);
    expect(missing, 'add these codes to ERROR_CODES in src/errors.ts').toEqual([]);
  });

  it('each code is thrown with the class its row names; ParError with the row’s exit', async () => {
    const wrong: string[] = [];
    for (const u of await allUses()) {
      const row = rows[u.code];
      if (!row) continue;
      // A subclass of a family class (e.g. KeychainUnavailableError) counts as ParError's family.
      const family = row.family === u.via || (row.family === 'ParError' && !(u.via in FAMILY_EXITS));
      if (!family) wrong.push(`${u.file}:${u.line} ${u.code} thrown as ${u.via}, row says ${row.family}`);
      if (u.exit !== undefined && u.exit !== row.exit) wrong.push(`${u.file}:${u.line} ${u.code} exits ${u.exit}, row says ${row.exit}`);
    }
    expect(wrong).toEqual([]);
  });

  it('every row of a family has the exit its class uses', () => {
    for (const [code, row] of Object.entries(rows)) {
      if (row.family === 'ParError') continue;
      expect(row.exit, code).toBe(FAMILY_EXITS[row.family]);
    }
  });

  it('every exit status a row names is documented, and each meaning is one line', () => {
    const documented = new Set(EXIT_CODE_DOCS.map((d) => d.name));
    for (const [code, row] of Object.entries(rows)) {
      expect(documented.has(row.exit), code).toBe(true);
      expect(row.meaning, code).not.toMatch(/\n/);
      expect(row.meaning.length, code).toBeLessThan(120);
    }
    expect(EXIT_CODE_DOCS.map((d) => d.code)).toEqual(EXIT_CODE_DOCS.map((d) => ExitCode[d.name]));
  });

  it('the rows agreed with the other work streams are there', () => {
    expect(rows.LOCKED).toMatchObject({ exit: 'locked' });
    expect(ExitCode.locked).toBe(11);
    expect(ExitCode.outcomeUnknown).toBe(12);
    expect(ExitCode.unavailable).toBe(13);
    for (const [code, exit] of [
      ['OUTCOME_UNKNOWN', 12],
      ['KEYCHAIN_UNAVAILABLE', 13],
      ['TLS_UNTRUSTED', 5],
      ['KUBE_TLS_UNTRUSTED', 9],
      ['KUBE_TIMEOUT', 9],
      ['API_KEY_INVALID', 4],
    ] as const) {
      expect(ExitCode[rows[code]!.exit], code).toBe(exit);
    }
  });

  it('the scan reports an unknown code and a code thrown with the wrong class (it can fail)', () => {
    const classes = errorClasses(['class KubernetesError extends ParError {}', 'class Mine extends KubernetesError { constructor() { super(\'MINE_CODE\', \'m\'); } }']);
    const uses = codeUses(
      'x.ts',
      "throw new KubernetesError(\n  'KUBE_TYPO', 'msg');\nthrow new KubernetesError(ok ? 'CONFLICT' : 'KUBE_FORBIDDEN', m);\nnew ParError('LOCKED', 'conflict', m, h);\nclass Mine extends KubernetesError { constructor() { super('MINE_CODE', 'm'); } }\nnew Error('NOT_OURS');",
      classes,
    );
    expect(uses.map((u) => [u.code, u.via, u.exit])).toEqual([
      ['KUBE_TYPO', 'KubernetesError', undefined],
      ['CONFLICT', 'KubernetesError', undefined],
      ['KUBE_FORBIDDEN', 'KubernetesError', undefined],
      ['LOCKED', 'ParError', 'conflict'],
      ['MINE_CODE', 'Mine', undefined],
    ]);
    // LOCKED thrown with exit 'conflict' is flagged by the exit check above.
    expect(rows.LOCKED!.exit).not.toBe('conflict');
    expect('KUBE_TYPO' in rows).toBe(false);
  });
});

/** The exit status each family class passes to ParError (ChildExitError then uses the child's own). */
const FAMILY_EXITS: Record<string, keyof typeof ExitCode> = {
  UsageError: 'usage',
  ConfigError: 'config',
  IdentityDecodeError: 'storage',
  CredentialsRejectedError: 'credentialsRejected',
  EnrollmentError: 'enrollmentFailed',
  StorageError: 'storage',
  ConflictError: 'conflict',
  VerificationError: 'verificationFailed',
  KubernetesError: 'kubernetes',
  RolloutError: 'rolloutFailed',
  InterruptedError: 'interrupted',
  ReloadApplyError: 'config',
  ChildExitError: 'internal',
};
