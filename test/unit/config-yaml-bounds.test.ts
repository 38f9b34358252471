import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as yaml from 'yaml';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { decodeWithLibrary, excessiveAliasing } from '../../src/config/agent-yaml.js';
import { configError } from '../fixtures/expect-errors.js';

// parseAllDocuments is wrapped so the test can see when the reader leaves its fast path.
vi.mock('yaml', async (importOriginal) => {
  const actual = await importOriginal<typeof import('yaml')>();
  return { ...actual, parseAllDocuments: vi.fn(actual.parseAllDocuments) };
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-yaml-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function flatConfig(keys: number): string {
  const lines = ['private_action_runner:', '  enabled: true'];
  for (let i = 0; i < keys; i++) lines.push(`key_${i}: value_${i}`);
  return `${lines.join('\n')}\n`;
}

describe('a config file larger than 8 MiB is refused unread (docs/config-yaml.md, Size)', () => {
  it('CONFIG_TOO_LARGE, exit 3, naming the file and its size; 8 MiB itself is read', async () => {
    const main = join(dir, 'datadog.yaml');
    const limit = 8 * 1024 * 1024;
    const head = 'private_action_runner:\n  enabled: true\n';
    // Comments fill it: the largest file read is still a valid config.
    const fill = (bytes: number) => `${head}${`#${'x'.repeat(98)}\n`.repeat(Math.floor((bytes - head.length) / 100))}`.padEnd(bytes, '\n');
    await writeFile(main, fill(limit));
    await expect(loadAgentConfig({ cfgPath: dir, env: {} })).resolves.toMatchObject({ file: main });
    await writeFile(main, fill(limit + 1));
    const err = await configError(loadAgentConfig({ cfgPath: dir, env: {} }));
    expect(err.code).toBe('CONFIG_TOO_LARGE');
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe(`config file ${main} is ${limit + 1} bytes or more: par-identity reads agent config files of at most 8 MiB`);
    expect(err.details).toEqual({ file: main, limitBytes: limit });
  });
});

describe('alias expansion is bounded as the agent bounds it, and reported as a config error', () => {
  it('a "billion laughs" document is CONFIG_YAML_ALIASES, exit 3, not an internal error', async () => {
    let text = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i < 9; i++)
      text += `a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(', ')}]\n`;
    const main = join(dir, 'datadog.yaml');
    await writeFile(main, text);
    const err = await configError(loadAgentConfig({ cfgPath: dir, env: {} }));
    expect(err.code).toBe('CONFIG_YAML_ALIASES');
    expect(err.exitCode).toBe(3);
    expect(err.message).toMatch(
      new RegExp(`^${main}:\\d+: invalid YAML: document contains excessive aliasing \\(a YAML "billion laughs" document\\)$`),
    );
  });

  it("yaml.v2's rule: over 100 alias decodes in over 1000, at most 99% of a small document, falling to 10%", () => {
    expect(excessiveAliasing(100, 100_000)).toBe(false);
    expect(excessiveAliasing(990, 1000)).toBe(false);
    expect(excessiveAliasing(1000, 1001)).toBe(true);
    expect(excessiveAliasing(990, 1001)).toBe(false);
    expect(excessiveAliasing(992, 1001)).toBe(true);
    expect(excessiveAliasing(390_000, 400_000)).toBe(false);
    expect(excessiveAliasing(400_000, 4_000_000)).toBe(false);
    expect(excessiveAliasing(400_001, 4_000_000)).toBe(true);
  });

  it('a few ordinary aliases still load', async () => {
    await writeFile(join(dir, 'datadog.yaml'), 'base: &b {enabled: true}\nprivate_action_runner: *b\n');
    const config = await loadAgentConfig({ cfgPath: dir, env: {} });
    expect(config.getBool('private_action_runner.enabled')).toBe(true);
  });

  it('an alias to an undefined anchor is a config error too', async () => {
    await writeFile(join(dir, 'datadog.yaml'), 'a: *nope\n');
    const err = await configError(loadAgentConfig({ cfgPath: dir, env: {} }));
    expect(err.code).toBe('CONFIG_YAML_ALIASES');
    expect(err.message).toContain('Unresolved alias');
  });
});

describe('config loading is linear in the number of keys', () => {
  it('a plain config never reaches the library; one outside the fast path is decoded once per node', async () => {
    const parse = vi.mocked(yaml.parseAllDocuments);
    parse.mockClear();
    await writeFile(join(dir, 'datadog.yaml'), flatConfig(10));
    expect((await loadAgentConfig({ cfgPath: dir, env: {} })).getString('key_9')).toBe('value_9');
    expect(parse).not.toHaveBeenCalled();
    // An anchor is outside the fast path: the library parses it.
    await writeFile(join(dir, 'datadog.yaml'), `${flatConfig(10)}anchored: &a x\nalias: *a\n`);
    expect((await loadAgentConfig({ cfgPath: dir, env: {} })).getString('alias')).toBe('x');
    expect(parse).toHaveBeenCalledTimes(1);

    const decodes = (keys: number) => decodeWithLibrary('f', flatConfig(keys), yaml).decodes;
    // The document, the root map, the nested map's key, map and pair, then a key and a value per key.
    expect(decodes(1000)).toBe(2 * 1000 + 6);
    expect(decodes(50_000)).toBe(2 * 50_000 + 6);
  });

  it('a 50 000-key datadog.yaml loads by either path, and a repeated key at its very end wins, as in the agent', async () => {
    const main = join(dir, 'datadog.yaml');
    for (const tail of ['', 'anchored: &a x\n']) {
      await writeFile(main, `${flatConfig(50_000)}${tail}`);
      const config = await loadAgentConfig({ cfgPath: dir, env: {} });
      expect(config.getString('key_49999')).toBe('value_49999');
      expect(config.getBool('private_action_runner.enabled')).toBe(true);
    }
    await writeFile(main, `${flatConfig(50_000)}key_7: again\n`);
    const config = await loadAgentConfig({ cfgPath: dir, env: {} });
    expect(config.getString('key_7')).toBe('again');
    expect(config.getString('key_8')).toBe('value_8');
  });
});
