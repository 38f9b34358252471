import { ERROR_CODES, type ErrorCode, EXIT_CODE_DOCS, ExitCode } from '../../errors.js';

// README's exit-code table and the man page's EXIT STATUS section, both from the tables in
// src/errors.ts. README holds its copy between the markers below; scripts/sync-readme.mjs rewrites
// it and test/unit/readme-sync.test.ts fails when it is out of step.

export const README_EXIT_CODES_START = '<!-- exit-codes:start (generated from src/errors.ts by scripts/sync-readme.mjs) -->';
export const README_EXIT_CODES_END = '<!-- exit-codes:end -->';

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
    errors: rows.filter(([, row]) => ExitCode[row.exit] === d.code).map(([code, row]) => ({ code, meaning: row.meaning })),
  }));
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The Markdown between the README markers (markers included). */
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

/** README with its marked block replaced; throws when the markers are missing. */
export function syncReadme(readme: string): string {
  const start = readme.indexOf(README_EXIT_CODES_START);
  const end = readme.indexOf(README_EXIT_CODES_END);
  if (start < 0 || end < start) throw new Error('README.md has no exit-codes markers');
  return readme.slice(0, start) + renderReadmeExitCodes() + readme.slice(end + README_EXIT_CODES_END.length);
}
