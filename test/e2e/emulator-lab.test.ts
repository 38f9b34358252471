import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv, startCli } from './run-cli.js';

// `par-identity emulator` prints shell lines that make the next command work (issue 25: a lab in one
// paste). The lines are evaluated in bash as printed, and the rotations then run with nothing else set:
// no DD_* of the test (cleanEnv), so forgetting DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS would send the
// enrollment to the real Datadog host derived from `site` and fail here (loopback only).

async function untilStopHint(cli: ReturnType<typeof startCli>): Promise<string> {
  return new Promise((resolve, reject) => {
    cli.child.stdout.on('data', () => {
      if (cli.stdout().includes('Press Ctrl-C to stop.')) resolve(cli.stdout());
    });
    cli.exit.then(({ code }) => reject(new Error(`emulator exited (${code}): ${cli.stderr()}`)), reject);
  });
}

describe('par-identity emulator: a lab in one paste', () => {
  it('the printed lines, evaluated in bash, make rotate-identity and rotate-par-identity work', async () => {
    const cli = startCli(['emulator', '--kube']);
    try {
      const out = await untilStopHint(cli);
      const lines = out.split('\n');
      const start = lines.findIndex((l) => l.startsWith('# Lab: paste'));
      expect(start).toBeGreaterThanOrEqual(0);
      const end = lines.indexOf('', start);
      const paste = lines.slice(start, end).join('\n');
      expect(paste).toContain('export DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true');
      expect(paste).toMatch(/^export KUBECONFIG=/m);
      const script = `${paste}\n"$PAR_NODE" "$PAR_BIN" rotate-identity -c "$PAR_LAB/datadog.yaml" --json && "$PAR_NODE" "$PAR_BIN" rotate-par-identity -c "$PAR_LAB/datadog-cluster.yaml" --json && echo "lab=$PAR_LAB"`;
      const run = spawnSync('bash', ['-euc', script], { env: cleanEnv({ PAR_NODE: process.execPath, PAR_BIN: BIN, KUBECONFIG: undefined }), encoding: 'utf8', timeout: 30_000 });
      expect(run.status, run.stderr).toBe(0);
      const [local, cluster] = run.stdout.trim().split('\n').map((l) => (l.startsWith('{') ? JSON.parse(l) : l)) as { status: string }[];
      expect(local?.status).toBe('ok');
      expect(cluster?.status).toBe('ok');
      const dir = /^lab=(.+)$/m.exec(run.stdout)?.[1];
      expect(dir && existsSync(`${dir}/privateactionrunner_private_identity.json`)).toBe(true);
      cli.child.kill('SIGTERM');
      expect((await cli.exit).code).toBe(0);
      expect(existsSync(dir!), 'the lab dir is removed when the emulator stops').toBe(false);
    } finally {
      cli.child.kill('SIGTERM');
    }
  });
});
