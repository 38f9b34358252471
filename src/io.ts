import { InterruptedError } from './errors.js';
import { type Clock, systemClock } from './time/clock.js';

// What a command may touch of the outside world. Commands get it as a parameter so unit tests can
// run them without spawning; the e2e tests cover the real process wiring in cli.ts.

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  now(): Date;
  /**
   * How the run waits (retry backoff, Retry-After, polls); unset: real time. A test that moves now()
   * by hand sets it too, so a run's retries take no real time (ioClock).
   */
  sleep?: Clock['sleep'];
  /** stderr is a terminal (progress and colour go there). */
  isTTY: boolean;
  /** All of stdin ('' on a terminal). `signal` ends the read at once (a run stopped by SIGINT/SIGTERM): it rejects with InterruptedError. */
  readStdin(signal?: AbortSignal): Promise<string>;
  /** stdin is a terminal: secrets are asked for with a hidden prompt instead of read as lines. */
  stdinIsTTY: boolean;
  /**
   * Asks on stderr and reads one line from the terminal without echoing it. `signal` ends the prompt at
   * once, the terminal restored to echo first: it rejects with InterruptedError.
   */
  promptHidden(question: string, signal?: AbortSignal): Promise<string>;
  /**
   * Where progress goes instead of text on stderr: the programmatic API (src/api) hands it to its
   * caller's onProgress. Unset for the CLI.
   */
  progress?: (level: 'step' | 'info' | 'warn', text: string) => void;
  /** -q: stderr gets errors only; -v: also the detail lines. Unset: the normal level. */
  level?: 'quiet' | 'verbose';
}

const stoppedReading = (what: string) =>
  new InterruptedError(what, { message: `stopped while reading ${what}; nothing was read or stored` });

function promptHidden(question: string, signal?: AbortSignal): Promise<string> {
  if (signal?.aborted) return Promise.reject(stoppedReading('the hidden key prompt'));
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    // Raw (no echo, Ctrl-C as a character) before the question shows: keys typed as soon as it appears
    // are neither echoed nor turned into SIGINT by the terminal.
    stdin.setRawMode?.(true);
    process.stderr.write(question);
    let answer = '';
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (err?: Error) => {
      stdin.setRawMode?.(false);
      stdin.pause();
      stdin.off('data', onData);
      signal?.removeEventListener('abort', onAbort);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(answer);
    };
    // SIGINT/SIGTERM from outside the terminal (kill, a supervisor): echo back on before the run ends.
    const onAbort = () => done(stoppedReading('the hidden key prompt'));
    signal?.addEventListener('abort', onAbort, { once: true });
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        // Ctrl-C in raw mode is a character, not SIGINT: it ends the run as SIGINT would (exit 130).
        if (ch === '\u0003') return done(new InterruptedError('the hidden key prompt; nothing was read or stored'));
        if (ch === '\u007f' || ch === '\b') answer = answer.slice(0, -1);
        else answer += ch;
      }
    };
    stdin.on('data', onData);
  });
}

export function processIo(): Io {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    now: () => new Date(),
    isTTY: Boolean(process.stderr.isTTY),
    stdinIsTTY: Boolean(process.stdin.isTTY),
    promptHidden,
    readStdin: async (signal) => {
      if (process.stdin.isTTY) return '';
      if (signal?.aborted) throw stoppedReading('standard input');
      const chunks: Buffer[] = [];
      // A stop destroys stdin, which ends the loop (and lets the process exit without waiting for EOF).
      const onAbort = () => process.stdin.destroy();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      } catch (err) {
        if (!signal?.aborted) throw err;
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
      if (signal?.aborted) throw stoppedReading('standard input');
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/** The run's clock: "now" is the Io's (tests move it), waits the Io's when it has its own, else the system clock's. */
export function ioClock(io: Io): Clock {
  return { now: () => io.now().getTime(), sleep: io.sleep ?? systemClock.sleep };
}
