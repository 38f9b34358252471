import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { README_EXIT_CODES_END, README_EXIT_CODES_START, renderReadmeExitCodes, syncReadme } from '../../src/cli/docs/exit-status.js';
import { ERROR_CODES, EXIT_CODE_DOCS } from '../../src/errors.js';

describe('README exit codes are generated from src/errors.ts', () => {
  it('README.md is in step (fix: npm run build && node scripts/sync-readme.mjs)', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(README_EXIT_CODES_START);
    expect(syncReadme(readme) === readme, 'README.md exit-code block is stale: run `npm run build && node scripts/sync-readme.mjs`').toBe(true);
  });

  it('the block lists every exit status and every code', () => {
    const block = renderReadmeExitCodes();
    for (const { code } of EXIT_CODE_DOCS) expect(block).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
    for (const code of Object.keys(ERROR_CODES)) expect(block).toContain(`| \`${code}\` |`);
  });

  it('a stale block is replaced and the text around it kept', () => {
    const stale = `# title\n\n${README_EXIT_CODES_START}\n| 99 | gone |\n${README_EXIT_CODES_END}\n\nafter\n`;
    const synced = syncReadme(stale);
    expect(synced).not.toContain('| 99 | gone |');
    expect(synced.startsWith('# title\n\n')).toBe(true);
    expect(synced.endsWith('\n\nafter\n')).toBe(true);
    expect(syncReadme(synced)).toBe(synced);
    expect(() => syncReadme('no markers')).toThrow(/markers/);
  });
});
