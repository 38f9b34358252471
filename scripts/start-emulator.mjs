// Starts `par-identity emulator --json` from the built bin and resolves with its first JSON line.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../bin/par-identity.js', import.meta.url));

export function startEmulator(args = []) {
  const child = spawn(process.execPath, [BIN, 'emulator', '--json', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) =>
      resolve({
        info: JSON.parse(line),
        stop: () =>
          new Promise((done) => {
            child.once('close', done);
            child.kill('SIGTERM');
          }),
      }),
    );
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`emulator exited early (${code})`)));
  });
}
