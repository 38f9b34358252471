import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FaultRequest } from '../../emulators/kube/faults.js';
import { type ClusterFixture, clusterFixture, SECRET } from './cluster-fixture.js';

// Unknown outcomes resolved on a fresh connection (issue 31, point 4): the identity Secret's update
// answers 504 after the apiserver applied it, and the first read-back fails on the connection being
// closed. The read-back is retried on a new connection within the deadline and settles the outcome;
// when nothing can be read, OUTCOME_UNKNOWN is the run's one verdict, without advice to remove a
// runner that may be the one in service.

interface Doc {
  code?: string;
  status: string;
  message?: string;
  hint?: string;
  details?: Record<string, unknown>;
}

/** The n-th update of our Secret that is not a dry run (1: the pending key kept, 2: the identity written). */
function nthWrite(n: number): (req: FaultRequest) => boolean {
  let seen = 0;
  return (req) => req.name === SECRET && req.query.dryRun === undefined && ++seen === n;
}

describe('a 504 on the identity write, then the read-back on a closed connection', () => {
  let fx: ClusterFixture;
  beforeEach(async () => {
    fx = await clusterFixture();
    const first = await fx.rotate(['--no-verify']);
    expect(first.code, first.stderr).toBe(0);
  });
  afterEach(async () => {
    await fx.close();
  });

  /** The write answers 504 once applied; right after it, `resets` reads of the Secret are cut (served, then the socket destroyed). */
  function fault(resets: number): void {
    fx.kube.faults.failNext({ verb: 'update', resource: 'secrets', predicate: nthWrite(2) }, { code: 504, afterApply: true });
    fx.kube.faults.beforeNext({ verb: 'update', resource: 'secrets', predicate: nthWrite(2) }, () => {
      fx.kube.faults.failNext({ verb: 'get', resource: 'secrets', name: SECRET }, { afterApply: 'reset', times: resets });
    });
  }

  it('the read-back retried on a new connection finds the new identity: applied, one verdict, exit 0', async () => {
    fault(1);
    const run = await fx.rotate(['--no-verify', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as Doc & { urn?: string; identity?: { urn: string } };
    expect(doc.status).toBe('ok');
    expect(run.stderr).toContain('but reading the Secret back shows the new identity: it was applied');
    expect(run.stderr).not.toContain('OUTCOME_UNKNOWN');
    expect(run.stderr).not.toMatch(/remove that runner/i);
    const runner = fx.enrollment.runners.at(-1)!;
    expect(fx.secretData().urn).toContain(runner.runnerId);
  });

  it('no read-back answers before the deadline: OUTCOME_UNKNOWN (exit 12) alone, no advice to remove the runner in the Secret', async () => {
    fault(1000);
    const run = await fx.rotate(['--no-verify', '--json', '--timeout', '20s']);
    expect(run.code, run.stderr).toBe(12);
    const doc = JSON.parse(run.stdout) as Doc;
    expect(doc.code).toBe('OUTCOME_UNKNOWN');
    expect(doc.hint).toContain('Do not remove any runner in Datadog until you have checked');
    expect(run.stderr).not.toContain('remove that runner in Datadog, or rotate again');
    // Retried, each time on a new connection.
    const reads = fx.kube.requests.filter((r) => r.verb === 'get' && r.resource === 'secrets' && r.name === SECRET && r.status === 0);
    expect(reads.length).toBeGreaterThan(1);
  });
});
