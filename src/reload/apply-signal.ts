import { readFile } from 'node:fs/promises';
import { ReloadApplyError } from '../errors.js';
import { parseSignalName } from './signal-name.js';

// `watch --signal PID | --pidfile FILE --signal-name HUP`: tell a runner that its identity file
// changed. The pidfile is read at every signal, so a restarted runner is still found.

export { parseSignalName };

/** The signal recipient: a pid, or the pidfile that names it, and the signal to send. */
export interface SignalTarget {
  pid?: number;
  pidfile?: string;
  signal: NodeJS.Signals;
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
