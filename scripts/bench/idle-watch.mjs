import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';

// One idle `par-identity watch` as the benches measure it: started, waited for until it says it loaded
// the identity (its `loaded` JSON line), left idle 2 s, its /proc status read, then stopped.

/** The ms from spawn to `loaded`, and a reader of one /proc/<pid>/status field in MiB (NaN if absent). */
export async function idleWatch(cmd, args, env) {
  const start = process.hrtime.bigint();
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const lines = createInterface({ input: child.stdout });
  const loadedMs = await new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith('{') && JSON.parse(line).event === 'loaded') resolve(Number(process.hrtime.bigint() - start) / 1e6);
    });
    child.once('exit', (code) => reject(new Error(`watch exited early (${code})`)));
  });
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  const mib = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024;
  return { loadedMs, mib };
}
