import { lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.js';
import { serializeIdentityFile } from '../../src/identity/index.js';
import { replaceFileAtomically, swapIntoService, sweepInterruptedWrites } from '../../src/storage/atomic-write.js';
import { preflightIdentityDirectory, readIdentityFile } from '../../src/storage/identity-file.js';
import { adoptRecoveryAsBackup, listRecoverableIdentities, utcStamp } from '../../src/storage/recovery-files.js';
import { newIdentity } from '../fixtures/test-identities.js';

const NAME = 'privateactionrunner_private_identity.json';
const DEAD_PID = 2147483646;
const NOW = new Date(Date.UTC(2026, 11, 3, 9, 5, 12, 345));
const STAMP = '20261203T090512Z';

let dir: string;
let path: string;
let saved: string | undefined;
beforeAll(() => {
  saved = process.env.PAR_IDENTITY_FAILPOINT;
  delete process.env.PAR_IDENTITY_FAILPOINT;
});
afterAll(() => {
  if (saved !== undefined) process.env.PAR_IDENTITY_FAILPOINT = saved;
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-crash-'));
  path = join(dir, NAME);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const identityText = () => {
  const id = newIdentity();
  return serializeIdentityFile({ privateKey: id.privateKey, urn: id.urn });
};
const listing = async () => (await readdir(dir)).sort();
const read = (name: string) => readFile(join(dir, name), 'utf8');
const mode = async (name: string) => (await stat(join(dir, name))).mode & 0o777;

describe('utcStamp', () => {
  it('is compact UTC without milliseconds', () => {
    expect(utcStamp(NOW)).toBe(STAMP);
  });
});

describe('sweepInterruptedWrites never deletes the only copy of an identity', () => {
  it('removes temps equal to the live file, the backup or a recovery file, and temps that do not decode; keeps a distinct identity as .restore-<stamp>', async () => {
    const [live, backup, older, orphan] = [identityText(), identityText(), identityText(), identityText()];
    await writeFile(path, live);
    await writeFile(`${path}.bak`, backup);
    await writeFile(join(dir, `${NAME}.restore-20250101T000000Z`), older);
    const temps = {
      sameAsLive: `.${NAME}.tmp-${DEAD_PID}-00000001`,
      sameAsBackup: `.${NAME}.bak.tmp-${DEAD_PID}-00000002`,
      sameAsRecovery: `.${NAME}.tmp-${DEAD_PID}-00000003`,
      halfWritten: `.${NAME}.tmp-${DEAD_PID}-00000004`,
      orphan: `.${NAME}.tmp-${DEAD_PID}-00000005`,
      liveWriter: `.${NAME}.tmp-${process.ppid}-00000006`,
    };
    await writeFile(join(dir, temps.sameAsLive), live);
    await writeFile(join(dir, temps.sameAsBackup), backup);
    await writeFile(join(dir, temps.sameAsRecovery), older);
    await writeFile(join(dir, temps.halfWritten), orphan.slice(0, 40));
    await writeFile(join(dir, temps.orphan), orphan, { mode: 0o600 });
    await writeFile(join(dir, temps.liveWriter), identityText());
    const result = await sweepInterruptedWrites(path, NOW);
    expect(result.removed.sort()).toEqual([temps.sameAsLive, temps.sameAsBackup, temps.sameAsRecovery, temps.halfWritten].sort());
    expect(result.recovered).toEqual([`${path}.restore-${STAMP}`]);
    expect(await read(`${NAME}.restore-${STAMP}`)).toBe(orphan);
    expect(await mode(`${NAME}.restore-${STAMP}`)).toBe(0o600);
    expect(await listing()).toEqual(
      [temps.liveWriter, NAME, `${NAME}.bak`, `${NAME}.restore-${STAMP}`, `${NAME}.restore-20250101T000000Z`].sort(),
    );
    // A second sweep finds nothing more to do, and the recovery files stay.
    expect(await sweepInterruptedWrites(path, NOW)).toEqual({ removed: [], recovered: [], leftAlone: [] });
  });

  it('two orphans in the same second get distinct names', async () => {
    const [a, b] = [identityText(), identityText()];
    await writeFile(join(dir, `.${NAME}.tmp-${DEAD_PID}-0000000a`), a);
    await writeFile(join(dir, `.${NAME}.tmp-${DEAD_PID}-0000000b`), b);
    const result = await sweepInterruptedWrites(path, NOW);
    expect(result.recovered).toEqual([`${path}.restore-${STAMP}`, `${path}.restore-${STAMP}-2`]);
    expect([await read(`${NAME}.restore-${STAMP}`), await read(`${NAME}.restore-${STAMP}-2`)]).toEqual([a, b]);
  });
});

describe('a corrupt live file never goes onto a good backup', () => {
  it("replaceFileAtomically keepBackup 'aside' keeps it as .corrupt-<stamp> (0600) and leaves .bak untouched", async () => {
    const good = identityText();
    await writeFile(path, '{"private_key":"not-a-key","urn":"x"}', { mode: 0o644 });
    await writeFile(`${path}.bak`, good, { mode: 0o600 });
    const next = identityText();
    const result = await replaceFileAtomically(path, next, { keepBackup: 'aside', now: NOW });
    expect(result).toEqual({ path, keptAsidePath: `${path}.corrupt-${STAMP}`, warnings: [] });
    expect(await read(NAME)).toBe(next);
    expect(await read(`${NAME}.bak`)).toBe(good);
    expect(await read(`${NAME}.corrupt-${STAMP}`)).toBe('{"private_key":"not-a-key","urn":"x"}');
    expect(await mode(`${NAME}.corrupt-${STAMP}`)).toBe(0o600);
    expect(await listing()).toEqual([NAME, `${NAME}.bak`, `${NAME}.corrupt-${STAMP}`]);
  });
});

describe('swapIntoService', () => {
  it('rollback: the backup goes live, the replaced identity becomes .bak, nothing else is left', async () => {
    const [live, backup] = [identityText(), identityText()];
    await writeFile(path, live, { mode: 0o600 });
    await writeFile(`${path}.bak`, backup, { mode: 0o600 });
    const result = await swapIntoService(path, { now: NOW });
    expect(result).toEqual({ path, backupPath: `${path}.bak`, warnings: [] });
    expect(await read(NAME)).toBe(backup);
    expect(await read(`${NAME}.bak`)).toBe(live);
    expect([await mode(NAME), await mode(`${NAME}.bak`)]).toEqual([0o600, 0o600]);
    expect(await listing()).toEqual([NAME, `${NAME}.bak`]);
  });

  it('a live file that does not decode is kept as .corrupt-<stamp>; .bak stays the good identity', async () => {
    const backup = identityText();
    await writeFile(path, 'garbage');
    await writeFile(`${path}.bak`, backup);
    const result = await swapIntoService(path, { liveCorrupt: true, now: NOW });
    expect(result).toEqual({ path, keptAsidePath: `${path}.corrupt-${STAMP}`, warnings: [] });
    expect(await read(NAME)).toBe(backup);
    expect(await read(`${NAME}.bak`)).toBe(backup);
    expect(await read(`${NAME}.corrupt-${STAMP}`)).toBe('garbage');
  });

  it('from a recovery file: it goes live, the replaced identity is .bak, a distinct old .bak is kept as .restore-*', async () => {
    const [live, backup, orphan] = [identityText(), identityText(), identityText()];
    await writeFile(path, live);
    await writeFile(`${path}.bak`, backup);
    const from = join(dir, `${NAME}.restore-20250101T000000Z`);
    await writeFile(from, orphan);
    await swapIntoService(path, { from, now: NOW });
    expect(await read(NAME)).toBe(orphan);
    expect(await read(`${NAME}.bak`)).toBe(live);
    expect(await read(`${NAME}.restore-${STAMP}`)).toBe(backup);
    expect(await listing()).toEqual([NAME, `${NAME}.bak`, `${NAME}.restore-${STAMP}`]);
  });

  it('with no live file the backup is copied into place', async () => {
    const backup = identityText();
    await writeFile(`${path}.bak`, backup);
    await swapIntoService(path, { now: NOW });
    expect(await read(NAME)).toBe(backup);
    expect(await listing()).toEqual([NAME, `${NAME}.bak`]);
  });
});

describe('listRecoverableIdentities and adoptRecoveryAsBackup', () => {
  it('describes every recovery file: URN, fingerprint, whether it is redundant; finishing an interrupted rollback', async () => {
    const [live, replaced] = [identityText(), identityText()];
    // The state a kill -9 right after the rollback's first rename leaves: live = .bak, the replaced identity in .restore-*.
    await writeFile(path, live);
    await writeFile(`${path}.bak`, live);
    await writeFile(join(dir, `${NAME}.restore-${STAMP}`), replaced);
    await writeFile(join(dir, `${NAME}.corrupt-${STAMP}`), 'garbage');
    const found = await listRecoverableIdentities(path);
    expect(found).toEqual([
      { path: `${path}.corrupt-${STAMP}`, kind: 'corrupt', sameAs: null, decodes: false, error: 'file: is not valid JSON' },
      {
        path: `${path}.restore-${STAMP}`,
        kind: 'restore',
        sameAs: null,
        decodes: true,
        urn: JSON.parse(replaced).urn,
        fingerprint: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      },
    ]);
    await adoptRecoveryAsBackup(path, `${path}.restore-${STAMP}`);
    expect(await read(`${NAME}.bak`)).toBe(replaced);
    expect(await read(NAME)).toBe(live);
  });

  it('refuses to adopt over a backup that exists nowhere else', async () => {
    await writeFile(path, identityText());
    await writeFile(`${path}.bak`, identityText());
    await writeFile(join(dir, `${NAME}.restore-${STAMP}`), identityText());
    const err = await adoptRecoveryAsBackup(path, `${path}.restore-${STAMP}`).catch((e: unknown) => e);
    expect((err as StorageError).code).toBe('BACKUP_IN_USE');
    expect(await listing()).toEqual([NAME, `${NAME}.bak`, `${NAME}.restore-${STAMP}`]);
  });
});

describe('symbolic links are refused, never followed', () => {
  it('a symlinked live file: SYMLINK_REFUSED naming link and target; the target is untouched', async () => {
    const target = join(dir, 'elsewhere.json');
    const text = identityText();
    await writeFile(target, text, { mode: 0o644 });
    await symlink(target, path);
    const err = await readIdentityFile(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('SYMLINK_REFUSED');
    expect((err as StorageError).exitCode).toBe(7);
    expect((err as StorageError).message).toBe(`${path} is a symbolic link to ${target}; identity files are never followed through links`);
    expect(await readFile(target, 'utf8')).toBe(text);
    expect((await stat(target)).mode & 0o777).toBe(0o644);
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
  });

  it.each(['replace', 'swap'])('%s refuses a symlinked live file or backup and leaves the target as it was', async (op) => {
    const target = join(dir, 'elsewhere.json');
    const text = identityText();
    await writeFile(target, text, { mode: 0o644 });
    await symlink(target, op === 'replace' ? path : `${path}.bak`);
    if (op === 'swap') await writeFile(path, identityText());
    const call = op === 'replace' ? replaceFileAtomically(path, identityText(), { keepBackup: true }) : swapIntoService(path);
    const err = await call.catch((e: unknown) => e);
    expect((err as StorageError).code).toBe('SYMLINK_REFUSED');
    expect(await readFile(target, 'utf8')).toBe(text);
    expect((await stat(target)).mode & 0o777).toBe(0o644);
  });
});

describe('preflightIdentityDirectory', () => {
  it('probes the directory with a temp file of its own: a file at a predictable name is neither in the way nor removed', async () => {
    // The name the probe once had: whoever may write the directory could take it first.
    const planted = `.${NAME}.tmp-${process.pid}-probe`;
    await writeFile(join(dir, planted), 'not the tool’s');
    await preflightIdentityDirectory(path);
    expect(await listing()).toEqual([planted]);
    expect(await read(planted)).toBe('not the tool’s');
  });
});
