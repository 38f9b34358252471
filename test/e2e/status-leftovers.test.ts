import { readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IDENTITY, type LocalFixture, localFixture } from './local-fixture.js';

// `status` lists what crashed runs left beside the identity — a stale lock (its holder gone on this
// host), takeover files of dead takers, temporary files of dead writers — in text and in --json
// (`leftovers`). It never takes a stale lock over nor removes a takeover file; the temporary files of
// dead writers go by its sweep, as after a crash (docs/commands.md), so a planted temp is not listed
// by status but reported as removed; a temp of a live writer is never touched.

/** Larger than any pid_max Linux allows (2^22): kill(pid, 0) always says ESRCH. */
const DEAD_PID = 2147483646;

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(async () => {
  await fx.close();
});

const holder = (nonce: string) => JSON.stringify({ pid: DEAD_PID, host: hostname(), since: '2026-01-01T00:00:00.000Z', nonce });

describe('status lists leftovers', () => {
  it('a planted stale lock, takeover file and temp file: listed with their kind, none removed or taken over', async () => {
    const seeded = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(seeded.code, seeded.stderr).toBe(0);
    const lock = join(fx.dir, `${IDENTITY}.lock`);
    const takeover = `${lock}.takeover-feedfacefeedface`;
    const temp = join(fx.dir, `.${IDENTITY}.tmp-${DEAD_PID}-0badcafe`);
    await writeFile(lock, holder('feedfacefeedface'), { mode: 0o600 });
    await writeFile(takeover, holder('0123456789abcdef'), { mode: 0o600 });
    await writeFile(temp, 'half', { mode: 0o600 });
    const before = (await readdir(fx.dir)).sort();

    const run = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { leftovers: { path: string; kind: string; detail: string }[] };
    expect(out.leftovers).toEqual([
      { path: lock, kind: 'stale-lock', detail: `taken by pid ${DEAD_PID} since 2026-01-01T00:00:00.000Z; pid ${DEAD_PID} is gone` },
      { path: takeover, kind: 'takeover', detail: `left by pid ${DEAD_PID} (pid ${DEAD_PID} is gone)` },
    ]);
    expect(run.stderr).toContain('is stale and left in place');
    expect(run.stderr).toContain(`removed 1 temporary file(s) left by an interrupted run: .${IDENTITY}.tmp-${DEAD_PID}-0badcafe`);
    expect((await readdir(fx.dir)).sort()).toEqual(before.filter((f) => !f.includes('.tmp-')));

    const text = await fx.run(['status', '-c', fx.dir]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`  leftover:     ${lock} (stale lock: taken by pid ${DEAD_PID}`);
    expect(text.stdout).toContain(`  leftover:     ${takeover} (takeover file of a dead taker:`);
    expect((await readdir(fx.dir)).sort()).toEqual(before.filter((f) => !f.includes('.tmp-')));

    // The next writing run takes the stale lock over: the dead taker's guard of that very lock is itself
    // taken over, and every guard goes at once; the sweep removes the temp. Nothing is left.
    const next = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
    expect(next.code, next.stderr).toBe(0);
    const after = await fx.run(['status', '-c', fx.dir, '--json']);
    expect((JSON.parse(after.stdout) as { leftovers: { kind: string }[] }).leftovers).toEqual([]);
    expect((await readdir(fx.dir)).filter((f) => f.includes('.lock') || f.includes('.tmp-'))).toEqual([]);
  });

  it('a temp file of a live writer is neither listed nor touched', async () => {
    expect((await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'])).code).toBe(0);
    const live = join(fx.dir, `.${IDENTITY}.tmp-${process.pid}-0badcafe`);
    await writeFile(live, 'in progress', { mode: 0o600 });
    const run = await fx.run(['status', '-c', fx.dir, '--json']);
    expect((JSON.parse(run.stdout) as { leftovers: unknown[] }).leftovers).toEqual([]);
    expect(await readdir(fx.dir)).toContain(`.${IDENTITY}.tmp-${process.pid}-0badcafe`);
  });

  it('no leftovers: an empty list', async () => {
    expect((await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'])).code).toBe(0);
    const run = await fx.run(['status', '-c', fx.dir, '--json']);
    expect((JSON.parse(run.stdout) as { leftovers: unknown[] }).leftovers).toEqual([]);
  });
});
