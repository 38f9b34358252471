import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { decodeHolder, encodeHolder, judgeHolder, type RunHolder, thisRun } from '../../src/storage/run-holder.js';

// The holder of a pending key (docs/identity-lifecycle.md §3): what is written, what is believed of a
// record others may have written, and how status judges whether that run is still under way.

const NOW = Date.UTC(2026, 11, 7, 2, 0, 0);
const here = thisRun(NOW + 60_000);
const elsewhere = (deadlineMs: number): RunHolder => ({
  host: 'build-runner-7',
  pid: 4242,
  pidStart: 1,
  bootId: null,
  pidNamespace: null,
  deadlineMs,
});

describe('the holder record', () => {
  it('this process, with its start time, boot and pid namespace (Linux), round-trips through the record', () => {
    expect(here).toMatchObject({ pid: process.pid, deadlineMs: NOW + 60_000 });
    expect(here.pidStart).toEqual(expect.any(Number));
    expect(here.bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(here.pidNamespace).toMatch(/^\d+$/);
    expect(decodeHolder(JSON.parse(JSON.stringify(encodeHolder(here))))).toEqual(here);
  });

  it('a field of another form than the tool writes makes it no holder (the record lives where others may write)', () => {
    const good = encodeHolder(elsewhere(NOW));
    expect(decodeHolder(good)).toEqual(elsewhere(NOW));
    for (const bad of [
      { host: 'evil\u001b[31m' },
      { host: '' },
      { pid: 0 },
      { pid: -1 },
      { pid: 2 ** 40 },
      { pid: '42' },
      { deadline_ms: -1 },
      { deadline_ms: 1e300 },
      { deadline_ms: undefined },
      { pid_start: 'x' },
      { boot_id: '../../etc' },
      { pid_namespace: 'pid:[1]' },
    ]) {
      expect(decodeHolder({ ...good, ...bad }), JSON.stringify(bad)).toBeUndefined();
    }
    for (const none of [undefined, null, 'pid 1', 7, []]) expect(decodeHolder(none)).toBeUndefined();
  });
});

describe('whether the holder still runs', () => {
  it('on this host: a live pid with its start time runs; a gone pid or one that started at another time does not', async () => {
    expect(judgeHolder(here, NOW, here)).toMatchObject({ lives: true, checkedBy: 'process' });
    expect(judgeHolder({ ...here, pidStart: (here.pidStart ?? 0) + 1 }, NOW, here)).toMatchObject({
      lives: false,
      why: expect.stringContaining('now belongs to another process'),
    });
    const child = spawn(process.execPath, ['-e', '']);
    const pid = child.pid!;
    await new Promise((resolve) => child.on('exit', resolve));
    expect(judgeHolder({ ...here, pid, pidStart: null }, NOW, here)).toMatchObject({
      lives: false,
      checkedBy: 'process',
      why: `pid ${pid} on host ${here.host} is gone`,
    });
    // Its deadline does not matter where the process itself can be checked.
    expect(judgeHolder({ ...here, deadlineMs: NOW - 3_600_000 }, NOW, here).lives).toBe(true);
  });

  it('the same hostname in another boot or pid namespace is not checkable from here: the deadline decides', () => {
    const otherBoot = { ...here, pid: 4242, bootId: '00000000-0000-0000-0000-000000000000', deadlineMs: NOW + 1000 };
    expect(judgeHolder(otherBoot, NOW, here)).toMatchObject({ lives: true, checkedBy: 'deadline' });
    const otherNamespace = { ...here, pid: 4242, pidNamespace: '1', deadlineMs: NOW - 3_600_000 };
    expect(judgeHolder(otherNamespace, NOW, here)).toMatchObject({ lives: false, checkedBy: 'deadline' });
  });

  it('on another host: under way until its deadline plus two minutes, over after', () => {
    expect(judgeHolder(elsewhere(NOW + 1), NOW, here)).toMatchObject({ lives: true, checkedBy: 'deadline' });
    expect(judgeHolder(elsewhere(NOW - 120_000), NOW, here).lives).toBe(true);
    const over = judgeHolder(elsewhere(NOW - 120_001), NOW, here);
    expect(over).toMatchObject({ lives: false, checkedBy: 'deadline' });
    expect(over.why).toContain('build-runner-7');
  });
});
