import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  BRIEF_EXIT_CODES_END,
  BRIEF_EXIT_CODES_START,
  README_EXIT_CODES_END,
  README_EXIT_CODES_START,
  renderBriefExitCodes,
  renderReadmeExitCodes,
  syncReadme,
} from '../../src/cli/docs/exit-status.js';
import { ERROR_CODES, EXIT_CODE_DOCS } from '../../src/errors.js';

describe('the exit-code tables of README.md and docs/output.md are generated from src/errors.ts', () => {
  it('README.md holds the brief table, in step (fix: npm run build && node scripts/sync-readme.mjs)', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(BRIEF_EXIT_CODES_START);
    expect(syncReadme(readme) === readme, 'README.md exit-code block is stale: run `npm run build && node scripts/sync-readme.mjs`').toBe(
      true,
    );
  });

  it('docs/output.md holds the full table, in step', async () => {
    const doc = await readFile(new URL('../../docs/output.md', import.meta.url), 'utf8');
    expect(doc).toContain(README_EXIT_CODES_START);
    expect(syncReadme(doc) === doc, 'docs/output.md exit-code block is stale: run `npm run build && node scripts/sync-readme.mjs`').toBe(
      true,
    );
  });

  it('the full block lists every exit status and every code; the brief one every exit status', () => {
    const block = renderReadmeExitCodes();
    for (const { code } of EXIT_CODE_DOCS) expect(block).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
    for (const code of Object.keys(ERROR_CODES)) expect(block).toContain(`| \`${code}\` |`);
    const brief = renderBriefExitCodes();
    for (const { code } of EXIT_CODE_DOCS) expect(brief).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
    expect(brief).not.toContain('`INTERNAL`');
  });

  it('a stale block is replaced and the text around it kept', () => {
    for (const [start, end] of [
      [README_EXIT_CODES_START, README_EXIT_CODES_END],
      [BRIEF_EXIT_CODES_START, BRIEF_EXIT_CODES_END],
    ]) {
      const stale = `# title\n\n${start}\n| 99 | gone |\n${end}\n\nafter\n`;
      const synced = syncReadme(stale);
      expect(synced).not.toContain('| 99 | gone |');
      expect(synced.startsWith('# title\n\n')).toBe(true);
      expect(synced.endsWith('\n\nafter\n')).toBe(true);
      expect(syncReadme(synced)).toBe(synced);
    }
    expect(() => syncReadme('no markers')).toThrow(/markers/);
  });
});
