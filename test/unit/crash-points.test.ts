import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FAILPOINTS } from '../../src/failpoint.js';
import { serializeIdentityFile } from '../../src/identity/index.js';
import { sweepInterruptedWrites } from '../../src/storage/atomic-write.js';
import { listRecoverableIdentities } from '../../src/storage/recovery-files.js';
import { newIdentity } from '../fixtures/test-identities.js';

// Every storage failpoint, including those no command reaches yet (a swap from a .restore-* file, the
// sweep itself), hit with a real SIGKILL in a child process running the bundled storage module.

const NAME = 'privateactionrunner_private_identity.json';
let bundle: string;
let dir: string;
let path: string;
let saved: string | undefined;

beforeAll(async () => {
  saved = process.env.PAR_IDENTITY_FAILPOINT;
  delete process.env.PAR_IDENTITY_FAILPOINT;
  bundle = await mkdtemp(join(tmpdir(), 'par-crash-bundle-'));
  await build({
    stdin: {
      contents: `export { replaceFileAtomically, swapIntoService, sweepInterruptedWrites } from './src/storage/atomic-write.ts';`,
      resolveDir: fileURLToPath(new URL('../..', import.meta.url)),
      loader: 'ts',
    },
    outfile: join(bundle, 'storage.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
  });
});
afterAll(async () => {
  if (saved !== undefined) process.env.PAR_IDENTITY_FAILPOINT = saved;
  await rm(bundle, { recursive: true, force: true });
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-crash-points-'));
  path = join(dir, NAME);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const identityText = () => {
  const id = newIdentity();
  return serializeIdentityFile({ privateKey: id.privateKey, urn: id.urn });
};

function runChild(call: string, failpoint: string): NodeJS.Signals | null {
  const script = `import * as s from ${JSON.stringify(join(bundle, 'storage.mjs'))}; await ${call};`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, PAR_IDENTITY_FAILPOINT: failpoint },
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  return run.signal;
}

async function stableContents(): Promise<string[]> {
  const names = (await readdir(dir)).filter((n) => !n.startsWith('.'));
  return Promise.all(names.map((n) => readFile(join(dir, n), 'utf8')));
}

describe('swap from a recovery file, killed at each failpoint', () => {
  it.each(FAILPOINTS.swap)('%s: live, old backup and the restored identity all stay complete in stable files', async (point) => {
    const [live, backup, orphan] = [identityText(), identityText(), identityText()];
    await writeFile(path, live, { mode: 0o600 });
    await writeFile(`${path}.bak`, backup, { mode: 0o600 });
    const from = `${path}.restore-20250101T000000Z`;
    await writeFile(from, orphan, { mode: 0o600 });
    const signal = runChild(`s.swapIntoService(${JSON.stringify(path)}, { from: ${JSON.stringify(from)} })`, point);
    // The run reached the failpoint (every swap point is on this path).
    expect(signal).toBe('SIGKILL');
    await sweepInterruptedWrites(path);
    const contents = await stableContents();
    for (const text of [live, backup, orphan]) expect(contents).toContain(text);
    expect([live, orphan]).toContain(await readFile(path, 'utf8'));
    expect((await readdir(dir)).filter((n) => n.includes('.tmp-'))).toEqual([]);
  });
});

describe('rotation write, killed at each failpoint', () => {
  it.each(FAILPOINTS.replace)('%s: the previous and the new identity stay complete in stable files', async (point) => {
    const [live, backup, next] = [identityText(), identityText(), identityText()];
    const corrupt = point === 'after-keep-aside';
    await writeFile(path, corrupt ? 'garbage' : live, { mode: 0o600 });
    await writeFile(`${path}.bak`, backup, { mode: 0o600 });
    const signal = runChild(
      `s.replaceFileAtomically(${JSON.stringify(path)}, ${JSON.stringify(next)}, { keepBackup: ${corrupt ? "'aside'" : 'true'} })`,
      point,
    );
    expect(signal).toBe('SIGKILL');
    await sweepInterruptedWrites(path);
    const contents = await stableContents();
    expect(contents).toContain(next);
    expect(contents).toContain(corrupt ? 'garbage' : live);
    if (corrupt) expect(await readFile(`${path}.bak`, 'utf8')).toBe(backup);
    expect((await readdir(dir)).filter((n) => n.includes('.tmp-'))).toEqual([]);
  });
});

describe('the sweep itself, killed after keeping an orphan', () => {
  it('sweep-after-keep: the next sweep removes the temp (now redundant) and makes no second copy', async () => {
    const orphan = identityText();
    await writeFile(join(dir, `.${NAME}.tmp-2147483646-00000001`), orphan);
    expect(runChild(`s.sweepInterruptedWrites(${JSON.stringify(path)})`, 'sweep-after-keep')).toBe('SIGKILL');
    const second = await sweepInterruptedWrites(path);
    expect(second.recovered).toEqual([]);
    expect(second.removed).toEqual([`.${NAME}.tmp-2147483646-00000001`]);
    const found = await listRecoverableIdentities(path);
    expect(found).toHaveLength(1);
    expect(await readFile(found[0]!.path, 'utf8')).toBe(orphan);
  });
});
