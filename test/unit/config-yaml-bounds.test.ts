import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as yaml from 'yaml';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadAgentConfig, MAX_YAML_ALIASES } from '../../src/config/agent-config.js';
import { findDuplicateKey } from '../../src/config/yaml-keys.js';
import { configError } from '../fixtures/expect-errors.js';

// parseDocument is wrapped so the test can see which options the loader passes (the library's own
// key-uniqueness check compares every key with every earlier key: it must be off).
vi.mock('yaml', async (importOriginal) => {
  const actual = await importOriginal<typeof import('yaml')>();
  return { ...actual, parseDocument: vi.fn(actual.parseDocument) };
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

describe('alias expansion is bounded and reported as a config error', () => {
  it('a "billion laughs" document is CONFIG_YAML_ALIASES, exit 3, not an internal error', async () => {
    let text = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i < 9; i++) text += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`;
    const main = join(dir, 'datadog.yaml');
    await writeFile(main, text);
    const err = await configError(loadAgentConfig({ cfgPath: dir, env: {} }));
    expect(err.code).toBe('CONFIG_YAML_ALIASES');
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe(`${main}: invalid YAML: aliases expand beyond ${MAX_YAML_ALIASES} nodes (a YAML "billion laughs" document)`);
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
  it("the library's quadratic uniqueness check is off; our check visits each node once", async () => {
    const parse = vi.mocked(yaml.parseDocument);
    parse.mockClear();
    // A plain config is read by the one-pass fast path: the library is not even called.
    await writeFile(join(dir, 'datadog.yaml'), flatConfig(10));
    expect((await loadAgentConfig({ cfgPath: dir, env: {} })).getString('key_9')).toBe('value_9');
    expect(parse).not.toHaveBeenCalled();
    // An anchor is outside the fast path: the library parses it, with its own uniqueness check off.
    await writeFile(join(dir, 'datadog.yaml'), `${flatConfig(10)}anchored: &a x
alias: *a
`);
    expect((await loadAgentConfig({ cfgPath: dir, env: {} })).getString('alias')).toBe('x');
    expect(parse).toHaveBeenCalledTimes(1);
    expect(parse.mock.calls[0]![1]).toMatchObject({ uniqueKeys: false });

    const visits = (keys: number) => findDuplicateKey(yaml.parseDocument(flatConfig(keys), { uniqueKeys: false }).contents, yaml).visited;
    // Root map + nested map + its value + one value per key: exactly linear.
    expect(visits(1000)).toBe(1000 + 3);
    expect(visits(50_000)).toBe(50_000 + 3);
  });

  it('a 50 000-key datadog.yaml loads by either path, and a duplicate at its very end is still found with its line', async () => {
    const main = join(dir, 'datadog.yaml');
    for (const tail of ['', 'anchored: &a x\n']) {
      await writeFile(main, `${flatConfig(50_000)}${tail}`);
      const config = await loadAgentConfig({ cfgPath: dir, env: {} });
      expect(config.getString('key_49999')).toBe('value_49999');
      expect(config.getBool('private_action_runner.enabled')).toBe(true);
    }
    await writeFile(main, `${flatConfig(50_000)}key_7: again\n`);
    const err = await configError(loadAgentConfig({ cfgPath: dir, env: {} }));
    expect(err.message).toBe(`${main}:50003: invalid YAML: Map keys must be unique`);
  });

  it('duplicates are found in nested maps and maps inside sequences; equal-looking keys of different types are distinct', () => {
    const scan = (text: string) => findDuplicateKey(yaml.parseDocument(text, { uniqueKeys: false }).contents, yaml).duplicateAt;
    const nested = 'a:\n  b: 1\n  b: 2\n';
    expect(scan(nested)).toBe(nested.lastIndexOf('b'));
    const inSeq = 'list:\n  - x: 1\n    x: 2\n';
    expect(scan(inSeq)).toBe(inSeq.lastIndexOf('x'));
    expect(scan('1: a\n"1": b\n')).toBeUndefined();
    expect(scan('a: 1\nb: 2\n')).toBeUndefined();
  });
});
