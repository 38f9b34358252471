import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { FileTooLargeError, readHandleAtMost } from '../bounded-file.js';
import { ReloadApplyError } from '../errors.js';
import { failpoint } from '../failpoint.js';
import { pinProcess, procUidOf, stillPinned, unpin } from '../storage/pid.js';
import { parseSignalName } from './signal-name.js';

// `watch --signal PID | --pidfile FILE --signal-name HUP`: tell a runner that its identity file
// changed. The pidfile is read at every signal, so a restarted runner is still found.
// The tool often runs as root: a pidfile another user can write would let that user have root signal
// any process. So, as systemd checks `PIDFile=`, the file is read only when it is a regular file (not
// a link) owned by our euid or root and writable by nobody else, and only a process whose real uid is
// our euid is signalled. An explicit `--signal PID` is the operator's own choice and is not checked.

export { parseSignalName };

/** The signal recipient: a pid, or the pidfile that names it, and the signal to send. */
export interface SignalTarget {
  pid?: number;
  pidfile?: string;
  signal: NodeJS.Signals;
}

/** The pid a pidfile names, read only when the file is one systemd would trust for `PIDFile=`. */
/** A pid and a newline; 4 KiB leaves room for comments some tools add and reads no more. */
const MAX_PIDFILE_BYTES = 4096;

async function pidFromFile(file: string): Promise<number> {
  const unsafe = (why: string, details: Record<string, string | number | null> = {}) =>
    new ReloadApplyError(
      'PIDFILE_UNSAFE',
      `pidfile ${file} ${why}, so it is not trusted`,
      'The identity was written but nobody was signalled. ' +
        'Make the pidfile a regular file owned by the user running par-identity (or root) and not writable by group or others ' +
        '(chmod 644); the signal is retried.',
      { pidfile: file, ...details },
    );
  let handle: FileHandle | undefined;
  let text: string;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    // Checked on the descriptor that is read: a name swapped after the check changes nothing.
    const st = await handle.stat();
    const euid = process.geteuid?.() ?? 0;
    if (!st.isFile()) throw unsafe('is not a regular file');
    if (st.uid !== euid && st.uid !== 0) throw unsafe(`is owned by uid ${st.uid}, not by uid ${euid} or root`, { owner: st.uid });
    if (st.mode & 0o022)
      throw unsafe(
        `is writable by ${st.mode & 0o020 ? (st.mode & 0o002 ? 'its group and others' : 'its group') : 'others'} ` +
          `(mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`,
        { mode: (st.mode & 0o777).toString(8).padStart(4, '0') },
      );
    text = (await readHandleAtMost(handle, MAX_PIDFILE_BYTES)).toString('utf8');
  } catch (err) {
    if (err instanceof ReloadApplyError) throw err;
    if (err instanceof FileTooLargeError) {
      throw new ReloadApplyError(
        'PIDFILE_INVALID',
        `pidfile ${file} is larger than ${MAX_PIDFILE_BYTES} bytes: it does not hold a process id`,
        'The identity was written but nobody was signalled. Check --pidfile; the signal is retried.',
        { pidfile: file },
      );
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw unsafe('is a symbolic link');
    throw new ReloadApplyError(
      'PIDFILE_UNREADABLE',
      `cannot read pidfile ${file}: ${code}`,
      'The identity was written but nobody was signalled. Check --pidfile; the signal is retried.',
      { pidfile: file, errno: code ?? null },
    );
  } finally {
    await handle?.close();
  }
  const pid = Number(text.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new ReloadApplyError(
      'PIDFILE_INVALID',
      `pidfile ${file} does not hold a process id`,
      'The identity was written but nobody was signalled. Check --pidfile; the signal is retried.',
      { pidfile: file },
    );
  }
  return pid;
}

function signalFailed(signal: NodeJS.Signals, pid: number, why: string, errno: string | null): ReloadApplyError {
  return new ReloadApplyError(
    'SIGNAL_FAILED',
    `cannot send ${signal} to process ${pid}: ${why}`,
    'The identity was written but the runner was not told. Check --signal/--pidfile and that both run as the same user; the signal is retried.',
    { pid, errno },
  );
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw signalFailed(signal, pid, code === 'ESRCH' ? 'no such process' : code === 'EPERM' ? 'not permitted' : String(code), code ?? null);
  }
}

/**
 * Signals the process a pidfile names, only while it runs as our euid. The process is held by its
 * /proc directory from the check to the signal (src/storage/pid.ts): if it exits meanwhile and its pid
 * goes to another process (of another user, say), the check made just before kill(2) sees it and
 * nothing is signalled. What remains is the instant between that check and kill(2) (docs/security.md §4).
 */
function signalPinned(file: string, pid: number, signal: NodeJS.Signals): void {
  const euid = process.geteuid?.() ?? 0;
  const pinned = pinProcess(pid);
  if (!pinned) {
    // Nothing to read: the process is gone (kill says ESRCH) — or /proc is missing, and then nothing
    // proves the process is ours.
    if (procUidOf(process.pid) === undefined) {
      throw new ReloadApplyError(
        'SIGNAL_FOREIGN',
        `cannot tell which user process ${pid} (from pidfile ${file}) runs as: /proc is not readable`,
        'The identity was written but nobody was signalled. Mount /proc, or use --signal PID; the signal is retried.',
        { pidfile: file, pid },
      );
    }
    throw signalFailed(signal, pid, 'no such process', 'ESRCH');
  }
  try {
    if (pinned.uid !== euid) {
      throw new ReloadApplyError(
        'SIGNAL_FOREIGN',
        `process ${pid} (from pidfile ${file}) runs as uid ${pinned.uid}, not as uid ${euid} like par-identity, so it is not signalled`,
        'The identity was written but nobody was signalled. Run watch as the same user as the runner, or check who writes the pidfile; the signal is retried.',
        { pidfile: file, pid, uid: pinned.uid },
      );
    }
    failpoint('signal-after-check');
    if (!stillPinned(pinned))
      throw signalFailed(
        signal,
        pid,
        `it exited after it was checked (pidfile ${file}), and its pid may name another process now, so it is not signalled`,
        null,
      );
    kill(pid, signal);
  } finally {
    unpin(pinned);
  }
}

/** Sends the signal; returns the pid that got it. An explicit --signal PID is the operator's own choice and is not checked. */
export async function sendSignal(target: SignalTarget): Promise<number> {
  if (target.pid !== undefined) {
    kill(target.pid, target.signal);
    return target.pid;
  }
  const pid = await pidFromFile(target.pidfile!);
  signalPinned(target.pidfile!, pid, target.signal);
  return pid;
}
