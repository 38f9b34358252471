import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cleanEnv } from './run-cli.js';

// The soak (scripts/bench-soak.mjs, `npm run bench:soak`; docs/architecture.md, "Start-up and memory")
// runs for an hour and nobody watches its first minute: here it runs for seconds with one watcher per
// group, against the built binary, so that a change of the CLI the soak's watchers depend on (a flag, a
// unit, an event) fails here, not an hour's run (a bare --relist-interval once made every watcher exit
// at once). The figures it prints are not checked: seconds say nothing about drift.

const SCRIPT = fileURLToPath(new URL('../../scripts/bench-soak.mjs', import.meta.url));

describe('bench-soak', () => {
  it('starts its watchers, changes the Secret, and reports both groups with every watcher on the last change', async () => {
    const args = ['--soak-minutes', '0.05', '--watchers', '1', '--idle-watchers', '1', '--change-ms', '200', '--sample-seconds', '1'];
    const child = spawn(process.execPath, [SCRIPT, ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/2 watchers loaded and watching/);
    expect(stdout).toMatch(/every watcher held the last change; watch errors 0/);
    expect(stdout).toMatch(/watch RSS drift, with changes \(1 watchers\) +[\d.]+ → [\d.]+ MiB/);
    expect(stdout).toMatch(/watch RSS drift, without changes \(1 watchers\) +[\d.]+ → [\d.]+ MiB/);
  }, 180_000);
});
