import { spawn, spawnSync } from 'node:child_process';
import { BIN, type CliRun, cleanEnv } from './run-cli.js';

// Runs of the built binary in a mount namespace of their own (unshare -m), after a shell script that
// changes the mounts there (a read-only bind mount, another /etc/resolv.conf): nothing outside the run
// sees them. That needs root (CAP_SYS_ADMIN) and unshare(1); tests skip otherwise and say so.

export const CAN_UNSHARE_MOUNTS = process.geteuid?.() === 0 && spawnSync('unshare', ['-m', 'true']).status === 0;

/** `setup` (a shell script reading its words as $1…) runs first in the namespace, then the built binary with `args` replaces it. */
export function runInMountNamespace(setup: string, setupWords: string[], args: string[], env: Record<string, string>): Promise<CliRun> {
  const script = `${setup} && shift ${setupWords.length} && exec "$@"`;
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-m', 'sh', '-c', script, 'sh', ...setupWords, process.execPath, BIN, ...args], {
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
