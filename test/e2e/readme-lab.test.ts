import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv } from './run-cli.js';

// The README's lab walkthrough, run as written: every ```sh block between the lab markers, in order,
// in one bash with `set -e`, started in the checkout with the machine's PATH (no par-identity on it:
// the lab's first block puts the built one there, as it does for a reader). A block the test cannot
// run is marked `<!-- lab:skip reason -->` in the README source and listed below, so a new block is
// either run or deliberately skipped, never silently left out.

const README = fileURLToPath(new URL('../../README.md', import.meta.url));

/** The blocks the lab test does not run, with why (also those outside the lab section). */
const SKIPPED = ['installs globally', 'needs a real cluster', 'needs a real cluster'];

interface Block {
  code: string;
  skip?: string;
  inLab: boolean;
}

function blocksOf(readme: string): Block[] {
  const blocks: Block[] = [];
  let inLab = false;
  let skip: string | undefined;
  const lines = readme.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('<!-- lab:start')) inLab = true;
    else if (line.startsWith('<!-- lab:end')) inLab = false;
    const marked = /^<!-- lab:skip (.+) -->$/.exec(line);
    if (marked) skip = marked[1];
    if (line === '```sh') {
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
      blocks.push({ code: body.join('\n'), inLab, ...(skip ? { skip } : {}) });
      skip = undefined;
    }
  }
  return blocks;
}

const scratch: string[] = [];
afterAll(async () => {
  await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
});

describe('the README lab walkthrough', () => {
  it('marks exactly the blocks it does not run, and says why', async () => {
    const blocks = blocksOf(await readFile(README, 'utf8'));
    expect(blocks.filter((b) => b.skip).map((b) => b.skip)).toEqual(SKIPPED);
    expect(blocks.filter((b) => b.inLab && !b.skip).length).toBeGreaterThanOrEqual(3);
    // Outside the lab every shell block is marked: only the lab's are promised to run as written.
    expect(blocks.filter((b) => !b.inLab && !b.skip && b.code.includes('par-identity'))).toEqual([]);
  });

  it('runs, block after block, as written, pasted into a shell in the checkout', async () => {
    const blocks = blocksOf(await readFile(README, 'utf8')).filter((b) => b.inLab && !b.skip);
    const home = await mkdtemp(join(tmpdir(), 'par-readme-lab-'));
    scratch.push(home);
    // As an operator has it after the Quick start: a shell in the checkout, the machine's PATH (whose
    // node may be 20: the launcher refuses it), no par-identity anywhere on it. The lab itself puts the
    // checkout's on PATH. Its scratch folder (mktemp -d) goes under the test's.
    expect(blocks[0]?.code).toContain('dist/bin');
    // The lab stops what it starts; the trap is the test's safety net should a block fail half-way.
    const script = ['set -euo pipefail', "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT", ...blocks.map((b) => b.code)].join('\n');
    const env = cleanEnv({ HOME: home, TMPDIR: home, PATH: '/usr/local/bin:/usr/bin:/bin', NO_COLOR: '1' });
    const checkout = dirname(README);
    const result = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn('bash', ['-c', script], { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.on('close', (code) => resolve({ code, out }));
    });
    expect(result.code, result.out).toBe(0);
  }, 120_000);
});
