import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findPython } from '../fixtures/python.js';
import { BIN, cleanEnv } from './run-cli.js';

// `credentials set` on a terminal asks for the keys with a hidden prompt, in raw mode, where Ctrl-C is
// a character rather than SIGINT. The built binary runs on a real pseudo-terminal (python3's pty
// module, python3 found on PATH): Ctrl-C there ends the run as SIGINT would, INTERRUPTED, exit 130.

const PYTHON = findPython(['pty']);

// Runs argv on a pty; once `prompt` has been printed, types `keys`, or sends the signal `signal` (a
// name, or - for none) to the process as another process would; prints {"output", "exit", "typed",
// "echo"} as JSON, `echo` being whether the terminal echoes again once the run is over. Waits on the
// terminal's output, never a fixed time; a run that never prompts ends at its own exit.
const PTY_DRIVER = `
import json, os, pty, select, signal, sys, termios
prompt, keys, sig, argv = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3], sys.argv[4:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
out, typed = b'', False
while True:
    select.select([fd], [], [])
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not typed and prompt in out:
        if sig == '-':
            os.write(fd, keys)
        else:
            os.kill(pid, getattr(signal, sig))
        typed = True
_, status = os.waitpid(pid, 0)
echo = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
print(json.dumps({'output': out.decode('utf-8', 'replace'), 'exit': os.waitstatus_to_exitcode(status), 'typed': typed, 'echo': echo}))
`;

function onTerminal(
  args: string[],
  prompt: string,
  keys: string,
  env: NodeJS.ProcessEnv,
  signal = '-',
): Promise<{ output: string; exit: number; typed: boolean; echo: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON!, ['-c', PTY_DRIVER, prompt, keys, signal, process.execPath, BIN, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve(JSON.parse(stdout));
      } catch (err) {
        reject(new Error(`the pty driver printed ${JSON.stringify(stdout)}: ${err}`));
      }
    });
  });
}

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'par-prompt-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe.skipIf(!PYTHON && !process.env.CI)('the hidden key prompt on a terminal', () => {
  it('Ctrl-C at the API key prompt: INTERRUPTED, exit 130, nothing stored, no "bug" message, the keys typed never shown', async () => {
    const run = await onTerminal(
      ['credentials', 'set', '--profile', 'prompt-test', '--no-color'],
      'Datadog API key: ',
      'typed-so-far\u0003',
      cleanEnv({ HOME: home, NO_COLOR: '1' }),
    );
    expect(run.typed, run.output).toBe(true);
    expect(run.exit, run.output).toBe(130);
    expect(run.output).toContain('error[INTERRUPTED]');
    expect(run.output).toContain('the hidden key prompt; nothing was read or stored');
    expect(run.output).not.toContain('This is a bug');
    expect(run.output).not.toContain('INTERNAL');
    expect(run.output).not.toContain('typed-so-far');
  });

  it('SIGTERM from another process while the prompt waits: INTERRUPTED, exit 143, nothing stored, the terminal echoes again', async () => {
    const run = await onTerminal(
      ['credentials', 'set', '--profile', 'prompt-test', '--no-color'],
      'Datadog API key: ',
      '',
      cleanEnv({ HOME: home, NO_COLOR: '1' }),
      'SIGTERM',
    );
    expect(run.typed, run.output).toBe(true);
    expect(run.exit, run.output).toBe(143);
    expect(run.output).toContain(
      'error[INTERRUPTED]: stopped by SIGTERM while the keys were read, before anything was stored: keychain profile prompt-test unchanged',
    );
    expect(run.output).toContain('Nothing to undo. Run `par-identity credentials set --profile prompt-test` again when you want.');
    expect(run.echo).toBe(true);
  });
});
