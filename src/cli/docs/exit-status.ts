import { ERROR_CODES, type ErrorCode, EXIT_CODE_DOCS, ExitCode } from '../../errors.js';

// The exit-code tables of the Markdown docs and the man page's EXIT STATUS section, all from the
// tables in src/errors.ts. README.md holds the brief table (exit status and meaning) and
// docs/output.md the full one (every error code) between the markers below; scripts/sync-readme.mjs
// rewrites both and test/unit/readme-sync.test.ts fails when either is out of step.

// exported for tests: readme-sync finds the generated block by it
export const README_EXIT_CODES_START = '<!-- exit-codes:start (generated from src/errors.ts by scripts/sync-readme.mjs) -->';
// exported for tests: readme-sync finds the generated block by it
export const README_EXIT_CODES_END = '<!-- exit-codes:end -->';
// exported for tests: readme-sync finds the generated block by it
export const BRIEF_EXIT_CODES_START = '<!-- exit-codes-brief:start (generated from src/errors.ts by scripts/sync-readme.mjs) -->';
// exported for tests: readme-sync finds the generated block by it
export const BRIEF_EXIT_CODES_END = '<!-- exit-codes-brief:end -->';

interface ExitStatusDoc {
  code: number;
  meaning: string;
  errors: { code: ErrorCode; meaning: string }[];
}

export function exitStatusDocs(): ExitStatusDoc[] {
  const rows = Object.entries(ERROR_CODES) as [ErrorCode, (typeof ERROR_CODES)[ErrorCode]][];
  return EXIT_CODE_DOCS.map((d) => ({
    code: d.code,
    meaning: d.meaning,
    // INTERRUPTED exits 130 on SIGINT (its row) and 143 on SIGTERM (InterruptedError): listed under both.
    errors: rows
      .filter(([code, row]) => ExitCode[row.exit] === d.code || (d.name === 'terminated' && code === 'INTERRUPTED'))
      .map(([code, row]) => ({ code, meaning: row.meaning })),
  }));
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The Markdown between the README markers (markers included). */
// exported for tests: readme-sync compares README's block with it
export function renderReadmeExitCodes(): string {
  const docs = exitStatusDocs();
  const lines = [
    README_EXIT_CODES_START,
    '| exit | meaning | error codes |',
    '|---|---|---|',
    ...docs.map((d) => `| ${d.code} | ${cell(d.meaning)} | ${d.errors.map((e) => `\`${e.code}\``).join(', ')} |`),
    '',
    'Every error code (`error[CODE]` on stderr, `code` in JSON) is stable; what each one means:',
    '',
    '| code | exit | meaning |',
    '|---|---|---|',
    ...docs.flatMap((d) => d.errors.map((e) => `| \`${e.code}\` | ${d.code} | ${cell(e.meaning)} |`)),
    README_EXIT_CODES_END,
  ];
  return lines.join('\n');
}

/** The brief table (markers included): an exit status and what it means, for the operator's guide. */
// exported for tests: readme-sync compares the guide's block with it
export function renderBriefExitCodes(): string {
  return [
    BRIEF_EXIT_CODES_START,
    '| exit | meaning |',
    '|---|---|',
    ...exitStatusDocs().map((d) => `| ${d.code} | ${cell(d.meaning)} |`),
    BRIEF_EXIT_CODES_END,
  ].join('\n');
}

function replaceBlock(text: string, start: string, end: string, block: string): string | undefined {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) return undefined;
  return text.slice(0, from) + block + text.slice(to + end.length);
}

/** A document with each of its marked blocks (full and brief) replaced; throws when it has none. */
export function syncReadme(doc: string): string {
  const full = replaceBlock(doc, README_EXIT_CODES_START, README_EXIT_CODES_END, renderReadmeExitCodes());
  const brief = replaceBlock(full ?? doc, BRIEF_EXIT_CODES_START, BRIEF_EXIT_CODES_END, renderBriefExitCodes());
  if (full === undefined && brief === undefined) throw new Error('the document has no exit-codes markers');
  return brief ?? full!;
}
