import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { HOST_FIELD } from './lock.js';
import { pidAlive, procStartOf } from './pid.js';

// The run that holds a pending key (docs/identity-lifecycle.md §3): written into the pending record so
// that `status` can tell a rotation under way from one that died after sending its key. On the same
// host (same hostname, same boot, same pid namespace) the process itself is checked, pinned by its
// start time as the lock does (src/storage/lock.ts); anywhere else its pid means nothing here, and the
// run's own deadline (--timeout) says until when it may still be writing, plus a margin for clocks.

/** Who keeps a pending key: the process and the deadline of its run (epoch ms). */
export interface RunHolder {
  host: string;
  pid: number;
  /** Linux process start time (clock ticks since boot); null where /proc cannot be read. */
  pidStart: number | null;
  /** /proc/sys/kernel/random/boot_id: a pid and its start time mean something only within one boot. */
  bootId: string | null;
  /** The inode of /proc/self/ns/pid: a pid of another pid namespace (another container) cannot be checked. */
  pidNamespace: string | null;
  deadlineMs: number;
}

/** How long after its deadline a run on another host still counts as under way (clock skew, the write's last request). */
const OTHER_HOST_MARGIN_MS = 2 * 60_000;

function bootId(): string | null {
  try {
    const id = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return BOOT_ID.test(id) ? id : null;
  } catch {
    return null;
  }
}

function pidNamespace(): string | null {
  try {
    return /^pid:\[(\d{1,20})\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** This process, for a run that must finish by `deadlineMs`. */
export function thisRun(deadlineMs: number): RunHolder {
  return {
    host: hostname(),
    pid: process.pid,
    pidStart: procStartOf(process.pid) ?? null,
    bootId: bootId(),
    pidNamespace: pidNamespace(),
    deadlineMs,
  };
}

/** As kept in the pending record (snake case, like the record's other fields). */
export function encodeHolder(holder: RunHolder): Record<string, string | number | null> {
  return {
    host: holder.host,
    pid: holder.pid,
    pid_start: holder.pidStart,
    boot_id: holder.bootId,
    pid_namespace: holder.pidNamespace,
    deadline_ms: holder.deadlineMs,
  };
}

const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NAMESPACE = /^\d{1,20}$/;

const optional = <T>(value: unknown, valid: (v: unknown) => v is T): T | null | undefined =>
  value === undefined || value === null ? null : valid(value) ? value : undefined;

/**
 * The holder a record names, or undefined when it names none or one of another form than this tool
 * writes. A pending record is writable by whoever can write its directory or Secret: its host reaches
 * the terminal and its pid is signalled with kill(pid, 0), so every field is checked first.
 */
export function decodeHolder(value: unknown): RunHolder | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const isString =
    (re: RegExp) =>
    (x: unknown): x is string =>
      typeof x === 'string' && re.test(x);
  const isCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
  const pidStart = optional(v.pid_start, isCount);
  const boot = optional(v.boot_id, isString(BOOT_ID));
  const ns = optional(v.pid_namespace, isString(NAMESPACE));
  if (typeof v.host !== 'string' || !HOST_FIELD.test(v.host)) return undefined;
  if (!Number.isSafeInteger(v.pid) || (v.pid as number) <= 0 || (v.pid as number) > 0x7fffffff) return undefined;
  // A time a Date can hold (±8.64e15 ms), so it can be printed.
  if (!isCount(v.deadline_ms) || v.deadline_ms > 8.64e15) return undefined;
  if (pidStart === undefined || boot === undefined || ns === undefined) return undefined;
  return { host: v.host, pid: v.pid as number, pidStart, bootId: boot, pidNamespace: ns, deadlineMs: v.deadline_ms };
}

/** Whether the holder's run may still be under way, and why (for the operator: which check decided). */
interface HolderVerdict {
  lives: boolean;
  /** `process`: the pid was checked on this host; `deadline`: another host (or pid namespace), judged by the run's deadline. */
  checkedBy: 'process' | 'deadline';
  why: string;
}

/** Same hostname, and the same boot and pid namespace where both sides know them: the pid can be checked from here. */
function sameHost(holder: RunHolder, here: RunHolder): boolean {
  if (holder.host !== here.host) return false;
  if (holder.bootId && here.bootId && holder.bootId !== here.bootId) return false;
  if (holder.pidNamespace && here.pidNamespace && holder.pidNamespace !== here.pidNamespace) return false;
  return true;
}

export function judgeHolder(holder: RunHolder, nowMs: number, here: RunHolder = thisRun(nowMs)): HolderVerdict {
  const who = `pid ${holder.pid} on host ${holder.host}`;
  if (sameHost(holder, here)) {
    if (!pidAlive(holder.pid)) return { lives: false, checkedBy: 'process', why: `${who} is gone` };
    const start = procStartOf(holder.pid);
    if (holder.pidStart !== null && start !== undefined && start !== holder.pidStart)
      return { lives: false, checkedBy: 'process', why: `${who} now belongs to another process` };
    return { lives: true, checkedBy: 'process', why: `${who} is running` };
  }
  const until = holder.deadlineMs + OTHER_HOST_MARGIN_MS;
  const deadline = new Date(holder.deadlineMs).toISOString();
  if (nowMs <= until)
    return { lives: true, checkedBy: 'deadline', why: `${who} (not checkable from here): its run's deadline ${deadline} has not passed` };
  return { lives: false, checkedBy: 'deadline', why: `${who} (not checkable from here): its run's deadline ${deadline} passed` };
}
