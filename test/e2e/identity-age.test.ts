import { utimes } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { buildUrn, encodePrivateJwk, generateIdentityKey } from '../../src/identity/index.js';
import { type ClusterFixture, clusterFixture, NS, SECRET } from './cluster-fixture.js';
import { type LocalFixture, localFixture } from './local-fixture.js';

// Age everywhere and --if-older-than (issue 16): status says when the identity in service was written,
// and a scheduled rotation does nothing, successfully, while the identity is younger than the threshold.

const DAY = 86_400;
const json = (text: string) => JSON.parse(text) as Record<string, unknown>;
const enrollCalls = (requests: { route: string | null }[]) => requests.filter((r) => r.route === 'enroll');

describe('local identity file', () => {
  let fx: LocalFixture;
  afterEach(async () => fx.close());

  it('a missing identity is due; a fresh one is skipped; an old one (file mtime) is rotated', async () => {
    fx = await localFixture();
    const first = await fx.run(['rotate-identity', '-c', fx.dir, '--if-older-than', '90d', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(json(first.stdout).status).toBe('ok');
    expect(first.stderr).toContain('due: no identity yet');

    const fresh = await fx.run(['rotate-identity', '-c', fx.dir, '--if-older-than', '90d', '--json']);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(json(fresh.stdout)).toMatchObject({ status: 'skipped', urn: json(first.stdout).urn });
    expect(enrollCalls(fx.emulator.requests)).toHaveLength(1);

    const old = new Date(Date.now() - 100 * DAY * 1000);
    await utimes(fx.identityPath, old, old);
    const status = await fx.run(['status', '-c', fx.dir, '--json']);
    expect(status.code, status.stderr).toBe(0);
    const facts = json(status.stdout);
    expect(facts.rotatedAt).toBe(old.toISOString());
    expect(facts.ageSeconds as number).toBeGreaterThanOrEqual(100 * DAY);
    // (`unknownFields` is status's list of fields a newer agent wrote: empty here.)
    expect((status.stderr + status.stdout).replace('"unknownFields":[]', '')).not.toContain('unknown');

    const due = await fx.run(['rotate-identity', '-c', fx.dir, '--if-older-than', '90d', '--json']);
    expect(due.code, due.stderr).toBe(0);
    expect(json(due.stdout)).toMatchObject({ status: 'ok', previousUrn: json(first.stdout).urn });
    expect(enrollCalls(fx.emulator.requests)).toHaveLength(2);
  });

  it('a threshold without its unit is refused (a nightly --if-older-than 90 used to rotate every night), text and --json', async () => {
    fx = await localFixture();
    const seeded = await fx.run(['rotate-identity', '-c', fx.dir, '--json']);
    expect(seeded.code, seeded.stderr).toBe(0);
    const before = await fx.read();
    // Two minutes old: 90 read as seconds made this identity due.
    const old = new Date(Date.now() - 120_000);
    await utimes(fx.identityPath, old, old);
    fx.emulator.reset();
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--if-older-than', '90']);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      'error[USAGE]: --if-older-than must be a duration with its unit (ms, s, m, h or d), got "90"; for example: --if-older-than 90d',
    );
    expect(run.stderr).toContain('`par-identity rotate-identity --help`');
    expect(run.stderr).not.toContain('<command>');
    const asJson = await fx.run(['rotate-par-identity', '-c', fx.dir, '--if-older-than', '90', '--json']);
    expect(asJson.code).toBe(2);
    expect(asJson.stdout.trim().split('\n')).toHaveLength(1);
    expect(json(asJson.stdout)).toMatchObject({
      status: 'error',
      code: 'USAGE',
      exitCode: 2,
      message: expect.stringContaining('for example: --if-older-than 90d'),
    });
    expect(json(asJson.stdout).hint).not.toContain('<command>');
    expect(fx.emulator.requests).toHaveLength(0);
    expect(await fx.read()).toBe(before);
  });

  it('every timer takes its unit too; a bare 0 stays accepted where zero is allowed', async () => {
    fx = await localFixture();
    const bare = await fx.run(['rotate-identity', '-c', fx.dir, '--timeout', '10']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--timeout must be a duration with its unit (ms, s, m, h or d), got "10"; for example: --timeout 10s');
    const zero = await fx.run(['rotate-identity', '-c', fx.dir, '--wait-lock', '0', '--timeout', '20s', '--json']);
    expect(zero.code, zero.stderr).toBe(0);
  });

  it('rejects a malformed threshold as a usage error before any request, quoting it unless it looks like a key', async () => {
    fx = await localFixture();
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--if-older-than', 'soon-ish']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      '--if-older-than must be a duration with its unit, like 90d, 12h or 30m, got "soon-ish"; for example: --if-older-than 90d',
    );
    const key = '0123456789abcdef0123456789abcdef';
    const keyLike = await fx.run(['rotate-identity', '-c', fx.dir, '--if-older-than', key]);
    expect(keyLike.code).toBe(2);
    expect(keyLike.stderr).toContain('got a 32-character value');
    expect(keyLike.stderr).not.toContain(key);
    expect(fx.emulator.requests).toHaveLength(0);
  });
});

describe('identity Secrets', () => {
  let fx: ClusterFixture;
  afterEach(async () => fx.close());

  it('every rotation and rollback stamps par-identity.datadoghq.com/rotated-at; status reports the age', async () => {
    fx = await clusterFixture();
    const first = await fx.rotate(['--json']);
    expect(first.code, first.stderr).toBe(0);
    const stampedAt = fx.secret()!.metadata.annotations?.['par-identity.datadoghq.com/rotated-at'];
    expect(stampedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const skipped = await fx.rotate(['--if-older-than', '12h', '--json']);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(json(skipped.stdout)).toMatchObject({ status: 'skipped', namespace: NS, secretName: SECRET });
    expect(enrollCalls(fx.enrollment.requests)).toHaveLength(1);

    const status = await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(json(status.stdout)).toMatchObject({ rotatedAt: stampedAt, target: 'cluster-secret' });
    expect(typeof json(status.stdout).ageSeconds).toBe('number');
  });

  it('a Secret written by the Go agent (no annotation) is aged by its managedFields time', async () => {
    fx = await clusterFixture();
    const key = generateIdentityKey();
    const written = '2026-01-02T03:04:05Z';
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: SECRET,
        namespace: NS,
        managedFields: [
          { manager: 'datadog-cluster-agent', operation: 'Update', apiVersion: 'v1', time: written, fieldsType: 'FieldsV1', fieldsV1: {} },
        ],
      },
      type: 'Opaque',
      data: {
        private_key: Buffer.from(encodePrivateJwk(key)).toString('base64'),
        urn: Buffer.from(buildUrn({ region: 'us1', orgId: 1, runnerId: 'go-agent' })).toString('base64'),
      },
    } as never);
    const status = await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(json(status.stdout)).toMatchObject({ rotatedAt: written });
    expect(status.stderr + status.stdout).toContain('managedFields');
    const due = await fx.rotate(['--if-older-than', '30d', '--json', '--no-verify']);
    expect(due.code, due.stderr).toBe(0);
    expect(json(due.stdout).status).toBe('ok');
  });
});

describe('status across the fleet', () => {
  let fx: ClusterFixture;
  afterEach(async () => fx.close());

  it('--all-namespaces lists both layouts, one row each, and names a namespace it cannot read', async () => {
    fx = await clusterFixture();
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    const key = generateIdentityKey();
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'par-runner', namespace: 'other' },
      type: 'Opaque',
      data: {
        RUNNER_PRIVATE_KEY: Buffer.from(encodePrivateJwk(key)).toString('base64'),
        RUNNER_URN: Buffer.from(buildUrn({ region: 'us1', orgId: 5, runnerId: 'helm' })).toString('base64'),
      },
    } as never);
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'unrelated', namespace: 'other' },
      type: 'Opaque',
      data: { password: 'eA==' },
    } as never);
    const admin = await fx.run(['status', '-A', '--kubeconfig', fx.adminKubeconfig, '--json']);
    expect(admin.code, admin.stderr).toBe(0);
    const rows = (json(admin.stdout).secrets as { namespace: string; name: string; layout: string; fingerprint: string }[])
      .map((r) => `${r.namespace}/${r.name}:${r.layout}`)
      .sort();
    expect(rows).toEqual([`${NS}/${SECRET}:cluster-agent`, 'other/par-runner:helm-runner']);
    expect(admin.stderr + admin.stdout).not.toContain(encodePrivateJwk(key));

    // A token that may list namespaces and read Secrets in one of them only.
    // (kubeconfigFor grants within NS; the cluster-wide grant is added to the same token.)
    const scoped = await fx.kubeconfigFor('fleet-viewer', [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }], NS);
    fx.kube.addToken('token-fleet-viewer', {
      user: `system:serviceaccount:${NS}:fleet-viewer`,
      rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }],
    });
    const partial = await fx.run(['status', '-A', '--kubeconfig', scoped, '--json']);
    expect(partial.code, partial.stderr).toBe(0);
    const out = json(partial.stdout) as { secrets: unknown[]; unreadableNamespaces: { namespace: string }[] };
    expect(out.unreadableNamespaces.map((u) => u.namespace)).toContain('other');
    expect(partial.stderr).toMatch(/namespace other: Secrets not readable/);
  });

  it('--pods tells which Pod runs which identity, and whether the previous runner can go', async () => {
    fx = await clusterFixture();
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    const fingerprint = String(
      json((await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--json'])).stdout).fingerprint,
    );
    fx.kube.createObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'datadog-cluster-agent', namespace: NS },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'dca' } },
        template: { metadata: { labels: { app: 'dca' } }, spec: { containers: [{ name: 'a', image: 'x' }] } },
      },
    } as never);
    const pod = (name: string, fp: string) =>
      fx.kube.createObject({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: NS, labels: { app: 'dca' }, annotations: { 'par-identity.datadoghq.com/identity-fingerprint': fp } },
        spec: { containers: [{ name: 'a', image: 'x' }] },
      } as never);
    pod('dca-1', fingerprint);
    pod('dca-2', 'an-older-fingerprint');
    const mixed = await fx.run(['status', '--secret', '--pods', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--json']);
    // Pods on another identity: the previous runner is still needed, a status of its own (docs/output.md).
    expect(mixed.code, mixed.stderr).toBe(17);
    const view = json(mixed.stdout) as { pods: { name: string; runsCurrent: boolean }[]; previousRunnerRemovable: boolean };
    expect(view.pods.map((p) => `${p.name}:${p.runsCurrent}`).sort()).toEqual(['dca-1:true', 'dca-2:false']);
    expect(view.previousRunnerRemovable).toBe(false);
    expect(mixed.stdout).toContain('keep the previous runner');
  });
});
