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

// Runs argv on a pty; once `prompt` has been printed, types `keys`; prints {"output", "exit"} as JSON.
// Waits on the terminal's output, never a fixed time; a run that never prompts ends at its own exit.
const PTY_DRIVER = `
import json, os, pty, select, sys
prompt, keys, argv = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3:]
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
        os.write(fd, keys)
        typed = True
_, status = os.waitpid(pid, 0)
print(json.dumps({'output': out.decode('utf-8', 'replace'), 'exit': os.waitstatus_to_exitcode(status), 'typed': typed}))
`;

function onTerminal(args: string[], prompt: string, keys: string, env: NodeJS.ProcessEnv): Promise<{ output: string; exit: number; typed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON!, ['-c', PTY_DRIVER, prompt, keys, process.execPath, BIN, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
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
    const run = await onTerminal(['credentials', 'set', '--profile', 'prompt-test', '--no-color'], 'Datadog API key: ', 'typed-so-far\u0003', cleanEnv({ HOME: home, NO_COLOR: '1' }));
    expect(run.typed, run.output).toBe(true);
    expect(run.exit, run.output).toBe(130);
    expect(run.output).toContain('error[INTERRUPTED]');
    expect(run.output).toContain('the hidden key prompt; nothing was read or stored');
    expect(run.output).not.toContain('This is a bug');
    expect(run.output).not.toContain('INTERNAL');
    expect(run.output).not.toContain('typed-so-far');
  });
});
