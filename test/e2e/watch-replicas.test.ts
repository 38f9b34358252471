import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type DemoRunner, startDemoReplicas } from '../../emulators/demo-runner/index.js';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY, type EnrollmentEmulator, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import { agreeingAgent } from './cluster-fixture.js';
import { runCli } from './run-cli.js';
import { BINARY_WAIT_MS, eventually, type KubeFixture, kubeFixture, NAMESPACE, SECRET } from './watch-fixture.js';

// Sized for a loaded 2-core machine: each wait for the binary is generous, the test limit above their sum.
vi.setConfig({ testTimeout: 4 * BINARY_WAIT_MS, hookTimeout: BINARY_WAIT_MS });

// The proof: replicas sign a health check every 50 ms with whatever identity is current,
// while the BUILT `rotate-par-identity` enrolls a new runner and updates the shared Secret.
// The enrollment emulator keeps old and new runners valid, as Datadog does: 0 failed calls.

const REPLICAS = 4;
let kube: KubeFixture;
let enrollment: EnrollmentEmulator;
let dir: string;
let replicas: DemoRunner[] = [];

beforeEach(async () => {
  kube = await kubeFixture();
  enrollment = await startEnrollmentEmulator();
  // Off-cluster, the cluster agent's labelled Deployment places its cluster id (docs/protocol.md §6c);
  // it runs with the settings of the config below, which therefore agrees with it.
  for (const object of agreeingAgent(NAMESPACE, enrollment.url, { env: [{ name: 'DD_CLUSTER_NAME', value: 'replicas-e2e' }] }))
    kube.emu.createObject(object);
  dir = await mkdtemp(join(tmpdir(), 'par-replicas-'));
  await writeFile(
    join(dir, 'datadog-cluster.yaml'),
    [
      `api_key: ${DEFAULT_API_KEY}`,
      `app_key: ${DEFAULT_APP_KEY}`,
      `dd_url: ${enrollment.url}`,
      'cluster_name: replicas-e2e',
      `kube_resources_namespace: ${NAMESPACE}`,
      'private_action_runner:',
      '  enabled: true',
      '',
    ].join('\n'),
  );
  await kube.emu.writeKubeconfig(join(dir, 'kubeconfig'), { namespace: NAMESPACE });
});
afterEach(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  replicas = [];
  await kube.close();
  await enrollment.close();
  await rm(dir, { recursive: true, force: true });
});

/** The built `rotate-par-identity`: enroll a new runner, update the Secret, verify online. Returns the new fingerprint. */
async function rotate(): Promise<string> {
  const run = await runCli(['rotate-par-identity', '-c', dir, '--kubeconfig', join(dir, 'kubeconfig'), '--json'], {
    env: { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1' },
  });
  expect(run.code, run.stderr).toBe(0);
  const { fingerprint, urn } = JSON.parse(run.stdout) as { fingerprint: string; urn: string };
  expect(enrollment.runners.find((r) => urn.endsWith(`:${r.runnerId}`))?.publicKeyThumbprint).toBe(fingerprint);
  return fingerprint;
}

function start(): DemoRunner[] {
  replicas = startDemoReplicas(REPLICAS, {
    connect: () => kube.connection(),
    namespace: NAMESPACE,
    name: SECRET,
    enrollmentUrl: enrollment.url,
    intervalMs: 50,
    watch: { retryPolicy: { initialDelayMs: 20, maxDelayMs: 200, random: Math.random } },
  });
  return replicas;
}

/** Every replica has had `n` accepted calls signed with `fingerprint`. */
const callsWith = (fingerprint: string, n: number) => () => {
  for (const r of replicas) expect(r.stats().okByFingerprint[fingerprint] ?? 0).toBeGreaterThanOrEqual(n);
};

describe('replicas under rotation', () => {
  it(`${REPLICAS} replicas calling every 50 ms switch to each new identity with 0 failed calls`, async () => {
    const first = await rotate();
    start();
    await Promise.all(replicas.map((r) => r.watch.ready));
    await eventually(callsWith(first, 5), BINARY_WAIT_MS);

    const fingerprints = [first];
    for (let round = 0; round < 2; round++) {
      const next = await rotate();
      fingerprints.push(next);
      await eventually(callsWith(next, 5), BINARY_WAIT_MS);
    }
    const stats = await Promise.all(replicas.map((r) => r.stop()));
    replicas = [];
    for (const s of stats) {
      expect(s.failed, JSON.stringify(s.failures)).toBe(0);
      expect(s.sent).toBe(s.ok);
      expect(Object.keys(s.okByFingerprint)).toEqual(fingerprints);
    }
    expect(enrollment.runners).toHaveLength(3);
    // The server accepted every signed call it received (the replicas' and the rotations' own checks).
    const health = enrollment.requests.filter((r) => r.route === 'health');
    expect(health.length).toBeGreaterThanOrEqual(stats.reduce((n, s) => n + s.sent, 0) + 3);
    expect(health.filter((r) => r.status !== 200)).toEqual([]);
  });

  it('counts every call the server refuses (old runner revoked), and recovers with the next rotation', async () => {
    const first = await rotate();
    start();
    await eventually(callsWith(first, 3), BINARY_WAIT_MS);
    const oldRunner = enrollment.runners[0]!;
    enrollment.revoke(oldRunner.runnerId);
    await eventually(() => {
      for (const r of replicas) expect(r.stats().failed).toBeGreaterThan(0);
    }, BINARY_WAIT_MS);
    const next = await rotate();
    await eventually(callsWith(next, 3), BINARY_WAIT_MS);
    for (const r of replicas) expect(r.stats().failures.every((f) => f.fingerprint === first && f.status === 401)).toBe(true);
  });
});
