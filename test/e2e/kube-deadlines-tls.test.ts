import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ClusterFixture, clusterFixture, NS, SECRET } from './cluster-fixture.js';

// Kubernetes calls against a hung apiserver, an untrusted certificate and hostile server text,
// through the built binary.

let fx: ClusterFixture;
beforeEach(async () => {
  fx = await clusterFixture();
});
afterEach(async () => {
  await fx.close();
});

const status = (kubeconfig: string, extra: string[] = [], env: Record<string, string> = {}) =>
  fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', kubeconfig, ...extra], { env, timeoutMs: 20_000 });

/** The emulator's kubeconfig, rewritten by `edit` (e.g. without its CA). */
async function kubeconfigWith(name: string, edit: (cluster: Record<string, unknown>) => void): Promise<string> {
  const doc = parse(fx.kube.kubeconfig({ namespace: NS })) as { clusters: { cluster: Record<string, unknown> }[] };
  edit(doc.clusters[0]!.cluster);
  const path = join(fx.dir, name);
  await writeFile(path, stringify(doc), { mode: 0o600 });
  return path;
}

describe('a hung apiserver', () => {
  it('status --secret --timeout 5 exits 9 KUBE_TIMEOUT naming the call, instead of hanging', async () => {
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    // The identity Secret's read (the cluster agent's keys Secret, read before it, answers).
    const hang = fx.kube.faults.hang({ verb: 'get', resource: 'secrets', name: SECRET });
    const run = await status(fx.adminKubeconfig, ['--timeout', '5s']);
    // Killed by runCli's 20 s guard, the process would have no exit code.
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('error[KUBE_TIMEOUT]');
    // What was left of the 5 s once the config was loaded: the command's deadline caps the request.
    expect(run.stderr).toMatch(
      new RegExp(`reading Secret ${NS}/${SECRET}: no answer from the Kubernetes API within [0-4](\\.\\d)? s \\(command deadline\\)`),
    );
    expect(run.stderr).toContain('Nothing was changed.');
    expect(hang.hits).toBe(1);
  });
});

// --timeout bounds the whole command (docs/architecture.md §Deadlines). Not timed by the wall clock:
// the request that hung reports the time it was given, and that must be what was left of --timeout
// (under it, "command deadline"), not its own 30 s. On the old code the request waited 30 s and
// runCli's 20 s guard killed the process, so the exit code itself tells the two apart.
describe('--timeout bounds every Kubernetes request of a rotation', () => {
  for (const json of [false, true]) {
    it(`rotate-par-identity --timeout 5${json ? ' --json' : ''} against a hung apiserver: KUBE_TIMEOUT within what is left of 5 s, nothing enrolled`, async () => {
      expect((await fx.rotate(['--no-verify'])).code).toBe(0);
      const enrolledBefore = fx.enrollment.runners.length;
      // The identity Secret's read (the cluster agent's keys Secret, read before it, answers).
      const hang = fx.kube.faults.hang({ verb: 'get', resource: 'secrets', name: SECRET });
      const run = await fx.rotate(['--no-verify', '--timeout', '5s', ...(json ? ['--json'] : [])], { timeoutMs: 20_000 });
      expect(run.code, run.stderr).toBe(9);
      const text = json ? JSON.stringify(JSON.parse(run.stdout)) : run.stderr;
      if (json) expect(JSON.parse(run.stdout)).toMatchObject({ status: 'error', code: 'KUBE_TIMEOUT', exitCode: 9 });
      else expect(run.stderr).toContain('error[KUBE_TIMEOUT]');
      expect(text).toMatch(/no answer from the Kubernetes API within [0-4](\.\d)? s \(command deadline\)/);
      expect(hang.hits).toBe(1);
      expect(fx.enrollment.runners.length).toBe(enrolledBefore);
    });
  }
});

describe('TLS to the apiserver', () => {
  it('NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored (with a warning): an untrusted certificate is KUBE_TLS_UNTRUSTED, exit 9, never sent a request', async () => {
    const noCa = await kubeconfigWith('no-ca.kubeconfig', (c) => delete c['certificate-authority-data']);
    const before = fx.kube.requests.length;
    const run = await status(noCa, [], { NODE_TLS_REJECT_UNAUTHORIZED: '0' });
    expect(run.code, run.stderr).toBe(9);
    expect(run.stderr).toContain('NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored for Kubernetes');
    expect(run.stderr).toContain('error[KUBE_TLS_UNTRUSTED]');
    expect(run.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(fx.kube.requests.length).toBe(before);
  });

  it("the kubeconfig's own insecure-skip-tls-verify turns verification off, as kubectl; NODE_EXTRA_CA_CERTS adds the CA", async () => {
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    const skip = await kubeconfigWith('skip.kubeconfig', (c) => {
      delete c['certificate-authority-data'];
      c['insecure-skip-tls-verify'] = true;
    });
    const skipped = await status(skip);
    expect(skipped.code, skipped.stderr).toBe(0);
    const noCa = await kubeconfigWith('no-ca.kubeconfig', (c) => delete c['certificate-authority-data']);
    const caFile = join(fx.dir, 'ca.pem');
    await writeFile(caFile, fx.kube.caCert ?? '');
    const extraCa = await status(noCa, [], { NODE_EXTRA_CA_CERTS: caFile });
    expect(extraCa.code, extraCa.stderr).toBe(0);
  });
});

describe('server text', () => {
  it('an apiserver error message is printed without escapes or control characters', async () => {
    fx.kube.faults.failNext(
      { verb: 'get', resource: 'secrets' },
      { code: 500, message: 'etcd \u001b[31mon fire\u001b[0m\r\nfake: line\u0007 \u001b]8;;http://x\u0007link\u001b]8;;\u0007' },
    );
    const run = await status(fx.adminKubeconfig);
    expect(run.code).toBe(9);
    expect(run.stderr).toContain('etcd on fire fake: line link');
    expect(run.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });
});
