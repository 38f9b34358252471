import { readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { ReloadApplyError, UsageError } from '../errors.js';

// `watch --signal PID | --pidfile FILE --signal-name HUP`: tell a runner that its identity file
// changed. The pidfile is read at every signal, so a restarted runner is still found.

/** The signal recipient: a pid, or the pidfile that names it, and the signal to send. */

export interface SignalTarget {
  pid?: number;
  pidfile?: string;
  signal: NodeJS.Signals;
}

/** `HUP`, `SIGHUP` or `hup` → `SIGHUP`; anything the platform does not know is a usage error. */
export function parseSignalName(name: string): NodeJS.Signals {
  const upper = name.trim().toUpperCase();
  const full = (upper.startsWith('SIG') ? upper : `SIG${upper}`) as NodeJS.Signals;
  if (!(full in constants.signals)) throw new UsageError(`--signal-name ${JSON.stringify(name)} is not a signal name (try HUP, USR1, USR2, TERM)`);
  return full;
}

async function targetPid(target: SignalTarget): Promise<number> {
  if (target.pid !== undefined) return target.pid;
  const file = target.pidfile!;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ReloadApplyError('PIDFILE_UNREADABLE', `cannot read pidfile ${file}: ${code}`, 'The identity was written but nobody was signalled. Check --pidfile; the signal is retried.', { pidfile: file, errno: code ?? null });
  }
  const pid = Number(text.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    throw new ReloadApplyError('PIDFILE_INVALID', `pidfile ${file} does not hold a process id`, 'The identity was written but nobody was signalled. Check --pidfile; the signal is retried.', { pidfile: file });
  }
  return pid;
}

/** Sends the signal; returns the pid that got it. */
export async function sendSignal(target: SignalTarget): Promise<number> {
  const pid = await targetPid(target);
  try {
    process.kill(pid, target.signal);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ESRCH' ? 'no such process' : code === 'EPERM' ? 'not permitted' : String(code);
    throw new ReloadApplyError('SIGNAL_FAILED', `cannot send ${target.signal} to process ${pid}: ${why}`, 'The identity was written but the runner was not told. Check --signal/--pidfile and that both run as the same user; the signal is retried.', {
      pid,
      errno: code ?? null,
    });
  }
  return pid;
}
