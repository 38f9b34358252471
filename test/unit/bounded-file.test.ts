import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileTooLargeError, formatBytes, readHandleAtMost } from '../../src/bounded-file.js';
import { readIdentityFile } from '../../src/storage/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-bounded-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readAtMost(path: string, max: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    return await readHandleAtMost(handle, max);
  } finally {
    await handle.close();
  }
}

describe('readHandleAtMost', () => {
  it('reads a file up to its cap, refuses one byte more', async () => {
    const path = join(dir, 'f');
    await writeFile(path, 'x'.repeat(100));
    expect((await readAtMost(path, 100)).toString()).toBe('x'.repeat(100));
    await expect(readAtMost(path, 99)).rejects.toBeInstanceOf(FileTooLargeError);
    await writeFile(path, '');
    expect(await readAtMost(path, 10)).toHaveLength(0);
  });

  it('does not trust a size of 0 from stat (a /proc file): it reads on and stops past the cap', async () => {
    // /proc/self/status says size 0 and holds more than 100 bytes.
    await expect(readAtMost('/proc/self/status', 100)).rejects.toBeInstanceOf(FileTooLargeError);
    expect((await readAtMost('/proc/self/status', 1024 * 1024)).toString()).toContain('Name:');
  });

  it('formats caps as an operator reads them', () => {
    expect(formatBytes(8 * 1024 * 1024)).toBe('8 MiB');
    expect(formatBytes(64 * 1024)).toBe('64 KiB');
    expect(formatBytes(2048)).toBe('2 KiB');
    expect(formatBytes(1000)).toBe('1000 bytes');
  });
});

describe('readIdentityFile: an identity file over 64 KiB is corrupt, unread', () => {
  it('is reported corrupt with its size, its content not kept', async () => {
    const path = join(dir, 'identity.json');
    await writeFile(path, JSON.stringify({ private_key: 'k', urn: `urn:dd:apps:on-prem-runner:us1:2:${'r'.repeat(2 * 1024 * 1024)}` }));
    const state = await readIdentityFile(path);
    expect(state.state).toBe('corrupt');
    if (state.state !== 'corrupt') return;
    expect(state.text).toBe('');
    expect(state.error.message).toMatch(/^file: is \d+ bytes or more \(an identity file is at most 64 KiB\)$/);
  });

  it('a 2 MB URN in a file of 64 KiB or less would still be refused by its length', async () => {
    const path = join(dir, 'identity.json');
    await writeFile(path, JSON.stringify({ private_key: 'k', urn: `urn:dd:apps:on-prem-runner:us1:2:${'r'.repeat(60_000)}` }));
    const state = await readIdentityFile(path);
    expect(state.state).toBe('corrupt');
    if (state.state === 'corrupt') expect(state.error.message).toMatch(/^(urn|private_key): /);
  });
});
