import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { ConfigError } from '../../src/errors.js';
import { ROWS, type Row, renderTable } from '../fixtures/agent-yaml-table.js';

// The table of what the Go agent reads where YAML 1.1 and 1.2 differ or where its config layer
// converts (test/fixtures/agent-yaml-table.ts, with the Go code of every answer): par-identity must
// read the same, through whichever path of the reader the file takes.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-agent-yaml-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function bytesOf(row: Row): Buffer {
  const text = row.yaml ?? '';
  if (row.encoding === 'utf16le') return Buffer.from(text, 'utf16le');
  if (row.encoding === 'utf16be') return Buffer.from(text, 'utf16le').swap16();
  return Buffer.from(text, 'utf8');
}

/** What par-identity reads for the row, in the form of the agent's answer. */
async function ours(row: Row): Promise<unknown> {
  if (row.yaml !== undefined) await writeFile(join(dir, 'datadog.yaml'), bytesOf(row));
  const loading = loadAgentConfig({ cfgPath: dir, env: row.env ?? {} });
  if ('error' in row.read) {
    const err = await loading.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, row.case).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code, row.case).toBe(row.read.error);
    expect((err as ConfigError).message, row.case).toContain(row.read.message);
    return 'refused';
  }
  const config = await loading;
  if ('bool' in row.read) return config.getBool(row.read.bool);
  // getString has "" as unset (undefined); the agent's GetString gives "".
  if ('string' in row.read) return config.getString(row.read.string) ?? '';
  // A nil value is no value: the agent keeps what lies below (here nothing).
  return config.get(row.read.value) ?? null;
}

describe('datadog.yaml is read as the Go agent reads it', () => {
  it.each(ROWS.map((row) => [row.case, row] as const))('%s', async (_case, row) => {
    expect(await ours(row)).toEqual(row.agent);
  });

  it('the table covers both paths of the reader (some rows leave the fast path, some do not)', async () => {
    const { parseSimpleYaml } = await import('../../src/config/simple-yaml.js');
    const yamlRows = ROWS.filter((r) => r.yaml !== undefined && r.encoding === undefined);
    const fast = yamlRows.filter((r) => parseSimpleYaml(r.yaml!) !== undefined).length;
    expect(fast).toBeGreaterThan(20);
    expect(yamlRows.length - fast).toBeGreaterThan(20);
  });
});

describe('docs/config-yaml.md', () => {
  it('shows this table (par-identity reads every row as the agent does: the test above)', async () => {
    const doc = await readFile(new URL('../../docs/config-yaml.md', import.meta.url), 'utf8');
    expect(doc, 'regenerate the table in docs/config-yaml.md from test/fixtures/agent-yaml-table.ts').toContain(renderTable());
  });
});
