import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAILPOINTS } from '../../src/failpoint.js';
import { decodeIdentity } from '../../src/identity/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { type CliRun, startCli } from '../e2e/run-cli.js';
import { clusterFixture } from '../e2e/cluster-fixture.js';
import { IDENTITY, type LocalFixture, localFixture, secretsIn } from '../e2e/local-fixture.js';
import { HOSTILE_STREAM_CASES, runHostileStreamCase } from '../e2e/watch-hostile-scenario.js';

// The fault matrix (issue 13): the built binary driven through crashes, concurrent writers, unknown
// outcomes, malformed watch events, a hung apiserver, bad durations, TLS overrides and hostile server
// strings. Each run checks the invariants: a complete identity is in service, every identity a run
// reported is recoverable, the reported outcome matches what is stored, and no secret appears in any
// output. It ends by printing the table that README quotes (case, runs, held).

const rows = new Map<string, { runs: number; held: number }>();
function record(name: string, held: boolean): void {
  const row = rows.get(name) ?? { runs: 0, held: 0 };
  row.runs++;
  if (held) row.held++;
  rows.set(name, row);
}

afterAll(() => {
  const lines = [
    '| case | runs | held |',
    '|---|---|---|',
    ...[...rows].map(([name, r]) => `| ${name} | ${r.runs} | ${r.held} (${Math.round((100 * r.held) / r.runs)} %) |`),
  ];
  process.stdout.write(`\nfault matrix\n${lines.join('\n')}\n`);
});

/** Every identity a next run finds: live, .bak, .restore-*, .corrupt-*; the URNs they hold. */
async function stableUrns(fx: LocalFixture): Promise<string[]> {
  const names = (await readdir(fx.dir)).filter((n) => n === IDENTITY || n.startsWith(`${IDENTITY}.`)).filter((n) => !n.endsWith('.lock'));
  const urns: string[] = [];
  for (const n of names) {
    try {
      urns.push(parseIdentityFile(await readFile(join(fx.dir, n), 'utf8')).urn);
    } catch {
      // A corrupt copy holds no identity to recover.
    }
  }
  return urns;
}

async function liveDecodes(fx: LocalFixture): Promise<boolean> {
  try {
    decodeIdentity(parseIdentityFile(await fx.read()));
    return true;
  } catch {
    return false;
  }
}

const reportedUrn = (run: CliRun): string | undefined =>
  /^(?:rotated|rolled back to): (\S+)/m.exec(run.stdout)?.[1] ?? /rolled back .* to: (\S+)/.exec(run.stdout)?.[1];
const leaks = (run: CliRun, secrets: string[]) => secrets.some((s) => run.stdout.includes(s) || run.stderr.includes(s));

describe('kill -9 at every failpoint', () => {
  const rotatePoints = ['after-enroll', ...FAILPOINTS.replace.filter((p) => p !== 'after-keep-aside')];
  it.each(rotatePoints)('rotate-identity killed %s', async (point) => {
    const fx = await localFixture();
    try {
      await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
      const before = parseIdentityFile(await fx.read()).urn;
      const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { PAR_IDENTITY_FAILPOINT: point } });
      const status = await fx.run(['status', '-c', fx.dir, '--json']);
      // after-enroll: the enrolled key is pending, a possible orphan status reports with exit 15 (docs/identity-lifecycle.md §3).
      const statusOk = status.code === (point === 'after-enroll' ? 15 : 0);
      const held = run.signal === 'SIGKILL' && statusOk && (await liveDecodes(fx)) && (await stableUrns(fx)).includes(before);
      record(`rotate killed ${point}`, held);
      expect(held, `${point}: ${status.stderr}`).toBe(true);
    } finally {
      await fx.close();
    }
  });

  const swapPoints = FAILPOINTS.swap.filter((p) => p !== 'swap-after-keep-backup' && p !== 'swap-after-remove-source');
  it.each(swapPoints)('rollback killed %s', async (point) => {
    const fx = await localFixture();
    try {
      await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
      const older = parseIdentityFile(await fx.read()).urn;
      await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
      const newer = parseIdentityFile(await fx.read()).urn;
      const run = await fx.run(['rollback', '-c', fx.dir, '--no-verify'], { env: { PAR_IDENTITY_FAILPOINT: point } });
      const status = await fx.run(['status', '-c', fx.dir, '--json']);
      const urns = await stableUrns(fx);
      const held = run.signal === 'SIGKILL' && status.code === 0 && (await liveDecodes(fx)) && urns.includes(older) && urns.includes(newer);
      record(`rollback killed ${point}`, held);
      expect(held, `${point}: ${urns.join(', ')}`).toBe(true);
    } finally {
      await fx.close();
    }
  });
});

describe('kill -9 between the enrollment, the verification and the write (verify, then write)', () => {
  // The URN is recorded with the pending key before the health check: killed anywhere from there to the
  // write, nothing live changed, and the next run verifies that same key and writes it without enrolling
  // (docs/identity-lifecycle.md §3).
  const points = ['before-verify', 'after-verify', 'before-write'];
  it.each(points)(
    'rotate-identity killed %s: the file unchanged; the next run writes the pending key, no second enrollment',
    async (point) => {
      const fx = await localFixture();
      try {
        expect((await fx.run(['rotate-identity', '-c', fx.dir])).code).toBe(0);
        const before = await fx.read();
        const run = await fx.run(['rotate-identity', '-c', fx.dir], { env: { PAR_IDENTITY_FAILPOINT: point } });
        const pending = JSON.parse(await fx.read(`${IDENTITY}.pending`)) as { urn?: string };
        const status = await fx.run(['status', '-c', fx.dir, '--json']);
        const enrolled = fx.emulator.runners.length;
        const next = await fx.run(['rotate-identity', '-c', fx.dir]);
        const held =
          run.signal === 'SIGKILL' &&
          status.code === 15 &&
          pending.urn !== undefined &&
          next.code === 0 &&
          fx.emulator.runners.length === enrolled &&
          parseIdentityFile(await fx.read()).urn === pending.urn &&
          (await fx.read(`${IDENTITY}.bak`)) === before;
        record(`rotate killed ${point}`, held);
        expect(held, `${point}: ${status.stderr}\n${next.stderr}`).toBe(true);
      } finally {
        await fx.close();
      }
    },
  );

  it.each(points)(
    'rotate-par-identity killed %s: the Secret unchanged; the next run writes the pending key, no second enrollment',
    async (point) => {
      const fx = await clusterFixture();
      try {
        expect((await fx.rotate()).code).toBe(0);
        const before = fx.secretData();
        const run = await fx.rotate([], { env: { PAR_IDENTITY_FAILPOINT: point } });
        const { pending_private_key: pending, ...after } = fx.secretData();
        const urn = (JSON.parse(pending ?? '{}') as { urn?: string }).urn;
        const enrolled = fx.enrollment.runners.length;
        const next = await fx.rotate();
        const held =
          run.signal === 'SIGKILL' &&
          JSON.stringify(after) === JSON.stringify(before) &&
          urn !== undefined &&
          next.code === 0 &&
          fx.enrollment.runners.length === enrolled &&
          fx.secretData().urn === urn &&
          fx.secretData().previous_urn === before.urn;
        record(`rotate-par-identity killed ${point}`, held);
        expect(held, next.stderr).toBe(true);
      } finally {
        await fx.close();
      }
    },
  );
});

describe('kill -9 on the Secret path', () => {
  it.each(['after-secret-read', 'after-enroll'])(
    'rotate-par-identity killed %s: the Secret still holds the identity in service',
    async (point) => {
      const fx = await clusterFixture();
      try {
        await fx.rotate(['--no-verify']);
        const before = fx.secretData();
        const run = await fx.rotate(['--no-verify'], { env: { PAR_IDENTITY_FAILPOINT: point } });
        const status = await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig]);
        // Killed after the enrollment, the key sent is pending in the Secret: status reports the possible orphan (exit 15).
        const held =
          run.signal === 'SIGKILL' &&
          status.code === (point === 'after-enroll' ? 15 : 0) &&
          fx.secretData().urn === before.urn &&
          fx.secretData().private_key === before.private_key;
        record(`rotate-par-identity killed ${point}`, held);
        expect(held, status.stderr).toBe(true);
      } finally {
        await fx.close();
      }
    },
  );
});

/** Resolves once `pid` is stopped (SIGSTOP at a `:stop` failpoint), read from /proc; rejects if it exits first. */
async function stopped(pid: number, exit: Promise<unknown>): Promise<void> {
  let exited = false;
  void exit.then(() => (exited = true));
  for (;;) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return;
    if (exited) throw new Error(`pid ${pid} exited before its failpoint`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('two concurrent writers on the same identity file', () => {
  const pairs: [string, string][] = [
    ['rotate-identity', 'rotate-identity'],
    ['rotate-identity', 'rollback'],
    ['rollback', 'rollback'],
  ];
  // A point of each command inside its lock: between the enrollment and the write, inside the swap.
  const INSIDE_LOCK: Record<string, string> = { 'rotate-identity': 'after-enroll', rollback: 'swap-after-temp-write' };

  /** Each run either did its work or was refused by the lock; what it reported is on disk. */
  async function invariantsHold(fx: LocalFixture, runs: CliRun[], secrets: string[]): Promise<boolean> {
    const urns = await stableUrns(fx);
    const live = parseIdentityFile(await fx.read()).urn;
    const outcomesOk = runs.every((r) => r.code === 0 || r.code === 11);
    const reportedKept = runs
      .filter((r) => r.code === 0)
      .every((r) => {
        const urn = reportedUrn(r);
        return urn !== undefined && urns.includes(urn);
      });
    return outcomesOk && reportedKept && (await liveDecodes(fx)) && urns.includes(live) && !runs.some((r) => leaks(r, secrets));
  }

  it.each(pairs)('%s ‖ %s: the second while the first is stopped inside its lock, then 20 racing rounds that collide', async (a, b) => {
    const fx = await localFixture();
    try {
      await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
      await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify']);
      const secrets = secretsIn(await fx.read());

      // A certain collision: b runs while a holds the lock, stopped at a failpoint; b must be refused.
      const first = startCli([a, '-c', fx.dir, '--no-verify'], { env: { ...fx.env, PAR_IDENTITY_FAILPOINT: `${INSIDE_LOCK[a]}:stop` } });
      first.child.stdin.end();
      await stopped(first.child.pid!, first.exit);
      const second = await fx.run([b, '-c', fx.dir, '--no-verify']);
      first.child.kill('SIGCONT');
      const { code, signal } = await first.exit;
      const forced = [{ code, signal, stdout: first.stdout(), stderr: first.stderr() }, second];
      const overlapHeld =
        second.code === 11 && /error\[LOCKED\]/.test(second.stderr) && code === 0 && (await invariantsHold(fx, forced, secrets));
      record(`${a} ‖ ${b}, ${b} while ${a} holds the lock`, overlapHeld);
      expect(overlapHeld, forced.map((r) => `${r.code}: ${r.stderr.slice(-300)}`).join('\n')).toBe(true);

      // Races: started together, they collide in some rounds (one is refused with LOCKED); a matrix whose
      // runs never overlapped would prove nothing, so it goes on past 20 rounds until one did (at most 100).
      let collided = 0;
      for (let round = 0; round < 20 || (collided === 0 && round < 100); round++) {
        const runs = await Promise.all([a, b].map((cmd) => fx.run([cmd, '-c', fx.dir, '--no-verify'])));
        const collision = runs.some((r) => r.code === 11);
        if (collision) collided++;
        record(`${a} ‖ ${b}, rounds where one was refused LOCKED`, collision);
        const held = await invariantsHold(fx, runs, secrets);
        record(`${a} ‖ ${b}`, held);
        expect(held, runs.map((r) => `${r.code}: ${r.stderr.slice(-300)}`).join('\n')).toBe(true);
      }
      expect(collided, 'no round in which the two runs overlapped on the lock').toBeGreaterThan(0);
    } finally {
      await fx.close();
    }
  });
});

describe('Secret writes with an unknown outcome', () => {
  // The rotation's identity update is its second real update: the first keeps the pending key (docs/identity-lifecycle.md §3).
  const identityUpdate = () => {
    let seen = 0;
    return {
      verb: 'update',
      resource: 'secrets',
      predicate: (r: { query: Record<string, string> }) => r.query.dryRun !== 'All' && ++seen === 2,
    };
  };
  it.each([
    ['500 after the write was applied', { code: 500, afterApply: true as const }, 0],
    ['504 after the write was applied', { code: 504, afterApply: true as const }, 0],
    ['reset after the write was applied', { afterApply: 'reset' as const }, 0],
    ['500, not applied', { code: 500 }, 9],
  ])('rotate-par-identity: %s', async (name, fault, exit) => {
    const fx = await clusterFixture();
    try {
      await fx.rotate(['--no-verify']);
      const before = fx.secretData().urn;
      fx.kube.faults.failNext(identityUpdate(), fault);
      const run = await fx.rotate(['--no-verify', '--json']);
      const stored = fx.secretData().urn;
      const out = JSON.parse(run.stdout) as { urn?: string };
      const matches = exit === 0 ? run.code === 0 && out.urn === stored : run.code === exit && stored === before;
      record(`Secret write: ${name}`, matches);
      expect(matches, run.stderr).toBe(true);
    } finally {
      await fx.close();
    }
  });
});

describe('malformed watch events', () => {
  it.each(HOSTILE_STREAM_CASES)('watch given $kind', async (kase) => {
    const report = await runHostileStreamCase(kase);
    const held = report.counted && report.kept && report.recovered && report.stoppedCleanly && report.noKeyInOutput;
    record(`watch: ${kase.kind}`, held);
    expect(held, report.notes.join('; ')).toBe(true);
  });
});

describe('deadlines, durations, TLS and hostile strings', () => {
  it('a hung apiserver: status --secret gives up with KUBE_TIMEOUT', async () => {
    const fx = await clusterFixture();
    try {
      fx.kube.faults.hang({ verb: 'get', resource: 'secrets' });
      const run = await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--timeout', '3s']);
      const held = run.code === 9 && run.stderr.includes('KUBE_TIMEOUT');
      record('hung apiserver', held);
      expect(held, run.stderr).toBe(true);
    } finally {
      fx.kube.faults.clear();
      await fx.close();
    }
  });

  it.each([
    ['rollout', 'deployment/x', '--poll-interval', 'NaN'],
    ['watch', '--relist-interval', '3000000s'],
    ['rotate-identity', '--timeout', '99999999999s'],
    ['rotate-identity', '--if-older-than', '-3d'],
  ])('%s %s %s %s → usage error before any network call', async (...argv) => {
    const fx = await localFixture();
    try {
      const run = await fx.run(argv);
      const held = run.code === 2 && fx.emulator.requests.length === 0;
      record('huge, negative and NaN durations', held);
      expect(held, run.stderr).toBe(true);
    } finally {
      await fx.close();
    }
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 does not turn TLS off', async () => {
    const fx = await clusterFixture();
    try {
      // A kubeconfig without the emulator's CA: only verification can refuse it.
      const noCa = join(fx.dir, 'no-ca.kubeconfig');
      const text = (await readFile(fx.adminKubeconfig, 'utf8')).replace(/^\s*certificate-authority-data:.*$/m, '');
      await (await import('node:fs/promises')).writeFile(noCa, text);
      const run = await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', noCa], { env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } });
      const held = run.code === 9 && /NODE_TLS_REJECT_UNAUTHORIZED/.test(run.stderr) && fx.kube.requests.length === 0;
      record('NODE_TLS_REJECT_UNAUTHORIZED=0', held);
      expect(held, run.stderr).toBe(true);
    } finally {
      await fx.close();
    }
  });

  it('hostile server strings never reach the terminal raw', async () => {
    const fx = await localFixture();
    try {
      fx.emulator.script('enroll', { status: 400, body: JSON.stringify({ errors: ['\u001b[2J\u001b]0;pwned\u0007bad\nrequest\r'] }) });
      const run = await fx.run(['rotate-identity', '-c', fx.dir]);
      const held =
        run.code === 5 && !run.stderr.includes('\u001b') && !run.stderr.includes('\u0007') && !run.stderr.includes('bad\nrequest');
      record('hostile server strings', held);
      expect(held, JSON.stringify(run.stderr)).toBe(true);
    } finally {
      await fx.close();
    }
  });
});
