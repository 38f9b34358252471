import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodePrivateJwk } from '../../src/identity/index.js';
import { type ClusterFixture, clusterFixture, NS, SECRET } from './cluster-fixture.js';

// The Secret targets' pending key (docs/identity-lifecycle.md §3): rotate-par-identity killed with
// kill -9 between a successful enrollment and the Secret update (the built binary, failpoint
// after-enroll) leaves the key it sent in the Secret's data key pending_private_key, which the agent
// never reads; status reports the possible orphan (exit 15); the next rotation sets it aside.

let fx: ClusterFixture;
beforeEach(async () => {
  fx = await clusterFixture();
});
afterEach(async () => {
  await fx.close();
});

// The killed run named itself as the key's holder: status checked its pid on this host and found it gone.
const DEAD_HOLDER = {
  host: expect.any(String),
  pid: expect.any(Number),
  deadline: expect.any(String),
  lives: false,
  checkedBy: 'process',
  why: expect.stringMatching(/^pid \d+ on host \S+ is gone$/),
};

interface Orphan {
  path: string;
  state: string;
  fingerprint: string | null;
  runnerName: string | null;
  decodes: boolean;
}

const status = (json = true) =>
  fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, ...(json ? ['--json'] : [])]);

async function crashAfterEnroll(): Promise<{ before: Record<string, string> }> {
  const first = await fx.rotate(['--no-verify']);
  expect(first.code, first.stderr).toBe(0);
  const before = fx.secretData();
  const run = await fx.rotate(['--no-verify'], { env: { PAR_IDENTITY_FAILPOINT: 'after-enroll' } });
  expect(run.signal).toBe('SIGKILL');
  return { before };
}

describe('rotate-par-identity killed after the enrollment succeeded, before the Secret update', () => {
  it('the key sent is in the Secret as pending_private_key; the identity in service is untouched', async () => {
    const { before } = await crashAfterEnroll();
    const data = fx.secretData();
    expect([data.urn, data.private_key]).toEqual([before.urn, before.private_key]);
    const pending = JSON.parse(data.pending_private_key!) as Record<string, string>;
    expect(Object.keys(pending)).toEqual(['private_key', 'created_at', 'runner_name', 'enrollment_url', 'holder']);
    const orphan = fx.enrollment.runners.at(-1)!;
    expect(decodePrivateJwk(pending.private_key!).kid).toBe(orphan.publicKeyThumbprint);
    expect(pending.runner_name).toBe(orphan.name);
  });

  it('status lists the possible orphan and exits 15; the next rotation sets it aside, enrolls one runner, and status keeps listing it', async () => {
    await crashAfterEnroll();
    const orphan = fx.enrollment.runners.at(-1)!;
    const found = await status();
    expect(found.code, found.stderr).toBe(15);
    expect((JSON.parse(found.stdout) as { possibleOrphans: Orphan[] }).possibleOrphans).toEqual([
      {
        path: `Secret ${NS}/${SECRET} key pending_private_key`,
        state: 'pending',
        fingerprint: orphan.publicKeyThumbprint,
        createdAt: expect.any(String),
        runnerName: orphan.name,
        decodes: true,
        holder: DEAD_HOLDER,
      },
    ]);
    const human = await status(false);
    expect(human.code).toBe(15);
    expect(human.stdout).toContain(`POSSIBLE ORPHAN (pending): the key ${orphan.publicKeyThumbprint}`);
    // The way out removes one data key, never the Secret.
    expect(human.stdout).toContain(`kubectl -n ${NS} patch secret ${SECRET} --type json`);
    expect(human.stdout + human.stderr).not.toContain(JSON.parse(fx.secretData().pending_private_key!).private_key);

    const runners = fx.enrollment.runners.length;
    const next = await fx.rotate(['--no-verify', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain('possible orphan');
    expect(next.stderr).toContain(orphan.publicKeyThumbprint);
    expect(fx.enrollment.runners).toHaveLength(runners + 1);
    const data = fx.secretData();
    expect(data.pending_private_key).toBeUndefined();
    const aside = Object.keys(data).filter((k) => k.startsWith('orphan_private_key.'));
    expect(aside).toHaveLength(1);
    expect(decodePrivateJwk((JSON.parse(data[aside[0]!]!) as { private_key: string }).private_key).kid).toBe(orphan.publicKeyThumbprint);
    expect(data.urn).toMatch(new RegExp(`:${fx.enrollment.runners.at(-1)!.runnerId}$`));

    const after = await status();
    expect(after.code).toBe(15);
    expect((JSON.parse(after.stdout) as { possibleOrphans: Orphan[] }).possibleOrphans).toMatchObject([
      { path: `Secret ${NS}/${SECRET} key ${aside[0]}`, state: 'set aside', fingerprint: orphan.publicKeyThumbprint },
    ]);

    // A later rotation keeps the set-aside key (the cluster agent's data is otherwise replaced whole).
    const again = await fx.rotate(['--no-verify']);
    expect(again.code, again.stderr).toBe(0);
    expect(Object.keys(fx.secretData()).filter((k) => k.startsWith('orphan_private_key.'))).toEqual(aside);
  });

  it('a rotation that completes leaves no pending key, and status exits 0', async () => {
    await fx.rotate(['--no-verify']);
    const run = await fx.rotate(['--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    expect(Object.keys(fx.secretData()).sort()).toEqual([
      'api_key_hash',
      'orch_cluster_id',
      'previous_private_key',
      'previous_urn',
      'private_key',
      'urn',
    ]);
    expect((await status()).code).toBe(0);
  });

  it('a refused enrollment (401) removes the pending key again: nothing was registered', async () => {
    await fx.rotate(['--no-verify']);
    fx.enrollment.script('enroll', { status: 401, body: '{"errors":["Unauthorized"]}' });
    const run = await fx.rotate(['--no-verify']);
    expect(run.code).toBe(4);
    expect(fx.secretData().pending_private_key).toBeUndefined();
    expect((await status()).code).toBe(0);
  });
});
