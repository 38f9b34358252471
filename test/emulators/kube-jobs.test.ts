import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type KubeEmulator, type KubeObject, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';
import type { Pod } from '../../emulators/kube/simulation/index.js';
import { call, type Wire } from './kube-helpers.js';
import { nodes, type SimCluster, startCluster, stopCluster } from './kube-sim-helpers.js';
import { type KubectlRun, kubectlIn, kubectlPath, kubectlRequired } from './kubectl-runner.js';

// batch/v1 Jobs as the apiserver takes them (defaults, generated selector, validation), made the
// way the shipped recipe makes them: `kubectl create job --from=cronjob/par-identity-rotate`.

const CRONJOB_MANIFEST = resolve(import.meta.dirname, '../../deploy/rotation-cronjob.yaml');
const NS = 'datadog';
const CRONJOB = 'par-identity-rotate';

function expectOk(run: KubectlRun): string {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout;
}

function job(name: string, podSpec: Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: NS },
    spec: { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }], ...podSpec } }, ...extra },
  };
}

async function withKubectl(emu: KubeEmulator, prefix: string) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const cfg = join(dir, 'admin.yaml');
  await emu.writeKubeconfig(cfg, { namespace: NS });
  return { dir, kubectl: kubectlIn(dir, cfg) };
}

describe.skipIf(!kubectlPath && !kubectlRequired)('kubectl create job --from=cronjob', () => {
  let emu: KubeEmulator;
  let dir: string;
  let kubectl: ReturnType<typeof kubectlIn>;

  beforeAll(async () => {
    expect(kubectlPath, 'kubectl must be on PATH when CI=true').toBeTruthy();
    emu = await startKubeEmulator();
    seedNamespaces(emu, ['default', NS]);
    ({ dir, kubectl } = await withKubectl(emu, 'kube-jobs-'));
    expectOk(await kubectl(['apply', '-f', CRONJOB_MANIFEST]));
  });
  afterAll(async () => {
    await emu?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('creates a Job from the CronJob’s job template, owned by it and marked manual', async () => {
    expect(expectOk(await kubectl(['create', 'job', 'rotate-now', `--from=cronjob/${CRONJOB}`, '-n', NS]))).toBe('job.batch/rotate-now created\n');
    const cronJob = emu.getObject('batch/v1', 'CronJob', NS, CRONJOB)!;
    const created: Wire = JSON.parse(expectOk(await kubectl(['get', 'job', 'rotate-now', '-n', NS, '-o', 'json'])));
    const uid = created.metadata.uid;
    expect(created.metadata.ownerReferences).toEqual([{ apiVersion: 'batch/v1', kind: 'CronJob', name: CRONJOB, uid: cronJob.metadata.uid, controller: true }]);
    expect(created.metadata.annotations).toEqual({ 'cronjob.kubernetes.io/instantiate': 'manual' });
    // The Job had no labels of its own: it takes its template's, as defaulting gives them.
    expect(created.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'par-identity', 'app.kubernetes.io/component': 'rotator' });
    expect(created.metadata.generation).toBe(1);
    const templateSpec = (cronJob['spec'] as Wire).jobTemplate.spec.template.spec;
    expect(created.spec).toMatchObject({
      // From the CronJob's job template…
      backoffLimit: 0,
      activeDeadlineSeconds: 1800,
      // …and SetDefaults_Job.
      completions: 1,
      parallelism: 1,
      completionMode: 'NonIndexed',
      suspend: false,
      manualSelector: false,
      podReplacementPolicy: 'TerminatingOrFailed',
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
    });
    expect(created.spec.template.metadata.labels).toEqual({
      'app.kubernetes.io/name': 'par-identity',
      'app.kubernetes.io/component': 'rotator',
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': 'rotate-now',
      'controller-uid': uid,
      'job-name': 'rotate-now',
    });
    expect(created.spec.template.spec).toEqual(templateSpec);
    expect(created.spec.template.spec).toMatchObject({ restartPolicy: 'Never', serviceAccountName: 'par-identity-rotator', dnsPolicy: 'ClusterFirst' });
    expect(created.status).toEqual({});
    const post = emu.requests.find((r) => r.method === 'POST' && r.resource === 'jobs');
    expect(post).toMatchObject({ namespace: NS, status: 201 });
  });

  it('lists the Job with the apiserver’s columns and in `get all`', async () => {
    const table = expectOk(await kubectl(['get', 'jobs', '-n', NS]));
    expect(table.split('\n')[0]!.split(/\s+/)).toEqual(['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE']);
    expect(table).toMatch(/rotate-now\s+Running\s+0\/1\s+\d+s/);
    expect(expectOk(await kubectl(['get', 'all', '-n', NS, '-o', 'name']))).toContain('job.batch/rotate-now');
  });

  it('refuses a Job whose Pods would restart Always, or that sets its own selector', async () => {
    const always = await call(emu, 'POST', `/apis/batch/v1/namespaces/${NS}/jobs`, { body: job('always', {}) });
    expect(always.status).toBe(422);
    expect(always.body.message).toBe('Job.batch "always" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');
    const weird = await call(emu, 'POST', `/apis/batch/v1/namespaces/${NS}/jobs`, { body: job('weird', { restartPolicy: 'Sometimes' }) });
    expect(weird.body.message).toContain('spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"');
    const own = await call(emu, 'POST', `/apis/batch/v1/namespaces/${NS}/jobs`, {
      body: job('own', { restartPolicy: 'OnFailure' }, { selector: { matchLabels: { app: 'x' } } }),
    });
    expect(own.status).toBe(422);
    expect(own.body.details.causes.map((c: { field: string }) => c.field)).toContain('spec.selector');
    expect(own.body.message).toContain('`selector` not auto-generated');
    const ok = await call(emu, 'POST', `/apis/batch/v1/namespaces/${NS}/jobs`, { body: job('ok', { restartPolicy: 'OnFailure' }, { completions: 3 }) });
    expect(ok.status).toBe(201);
    expect(ok.body.spec).toMatchObject({ completions: 3, parallelism: 1, backoffLimit: 6 });
  });

  it('keeps the selector and template of a Job fixed', async () => {
    const current = (await call(emu, 'GET', `/apis/batch/v1/namespaces/${NS}/jobs/ok`)).body;
    current.spec.template.spec.containers[0].image = 'busybox:1.37';
    const res = await call(emu, 'PUT', `/apis/batch/v1/namespaces/${NS}/jobs/ok`, { body: current });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('spec.template: Invalid value:');
    expect(res.body.message).toContain('field is immutable');
  });

  it('orphans the Pods of a Job deleted without a propagation policy, with the apiserver’s warning', async () => {
    const owner = emu.getObject('batch/v1', 'Job', NS, 'ok')!;
    emu.createObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'ok-abcde', namespace: NS, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'ok', uid: owner.metadata.uid, controller: true }] },
      spec: { restartPolicy: 'OnFailure', containers: [{ name: 'main', image: 'busybox:1.36' }] },
    });
    const res = await call(emu, 'DELETE', `/apis/batch/v1/namespaces/${NS}/jobs/ok`);
    expect(res.status).toBe(200);
    expect(res.warning).toContain('child pods are preserved by default when jobs are deleted');
    expect(emu.getObject('v1', 'Pod', NS, 'ok-abcde')!.metadata.ownerReferences).toBeUndefined();
    const bad = await call(emu, 'DELETE', `/apis/batch/v1/namespaces/${NS}/jobs/rotate-now?propagationPolicy=Sideways`);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"');
  });
});

describe.skipIf(!kubectlPath && !kubectlRequired)('a Job in the cluster simulation', () => {
  let cluster: SimCluster | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    const done = cluster;
    cluster = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
    await stopCluster(done);
  });

  const podsOf = (emu: KubeEmulator, job: KubeObject) =>
    (emu.listObjects('v1', 'Pod', NS) as Pod[]).filter((p) => p.metadata.ownerReferences?.some((r) => r['uid'] === job.metadata.uid));

  it('runs the Pod of a Job made from the CronJob, completes when it succeeds, and takes it along when deleted', async () => {
    cluster = await startCluster({ nodes: nodes(1) }, true);
    const { emu, sim } = cluster;
    const k = await withKubectl(emu, 'kube-jobs-sim-');
    dir = k.dir;
    expectOk(await k.kubectl(['apply', '-f', CRONJOB_MANIFEST]));
    expectOk(await k.kubectl(['create', 'job', 'rotate-now', `--from=cronjob/${CRONJOB}`, '-n', NS]));
    const created = emu.getObject('batch/v1', 'Job', NS, 'rotate-now')!;
    const running = await sim.waitFor(() => podsOf(emu, created).find((p) => p.status?.phase === 'Running'), { what: 'a Running Pod of the Job' });
    expect(running.metadata.name).toMatch(/^rotate-now-[a-z0-9]{5}$/);
    expect(running.metadata.ownerReferences).toEqual([{ apiVersion: 'batch/v1', kind: 'Job', name: 'rotate-now', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(running.metadata.labels).toMatchObject({
      'app.kubernetes.io/name': 'par-identity',
      'batch.kubernetes.io/job-name': 'rotate-now',
      'batch.kubernetes.io/controller-uid': created.metadata.uid,
      'job-name': 'rotate-now',
      'controller-uid': created.metadata.uid,
    });
    expect(running.spec).toMatchObject({ nodeName: 'node-a', serviceAccountName: 'par-identity-rotator', restartPolicy: 'Never' });
    const active = await sim.waitFor(() => {
      const s = emu.getObject('batch/v1', 'Job', NS, 'rotate-now')?.['status'] as Wire;
      return s?.active === 1 && s.ready === 1 ? s : undefined;
    }, { what: 'status.active 1' });
    expect(active).toMatchObject({ active: 1, ready: 1, terminating: 0, uncountedTerminatedPods: {}, startTime: expect.stringMatching(/Z$/) });
    expect(podsOf(emu, created)).toHaveLength(1);
    const get = expectOk(await k.kubectl(['get', 'pods', '-n', NS, '-l', 'job-name=rotate-now', '-o', 'name']));
    expect(get.trim()).toBe(`pod/${running.metadata.name}`);

    // What a kubelet reports when the container exits 0.
    const pod = emu.getObject('v1', 'Pod', NS, running.metadata.name!) as Pod;
    emu.updateObject({ ...pod, status: { ...pod.status, phase: 'Succeeded' } });
    const done = await sim.waitFor(() => {
      const s = emu.getObject('batch/v1', 'Job', NS, 'rotate-now')?.['status'] as Wire;
      return s?.conditions?.some((c: Wire) => c.type === 'Complete') ? s : undefined;
    }, { what: 'the Complete condition' });
    expect(done).toMatchObject({ succeeded: 1, ready: 0, completionTime: expect.any(String) });
    expect(done.active).toBeUndefined();
    expect(done.conditions.map((c: Wire) => `${c.type}=${c.status}:${c.reason}`)).toEqual(['SuccessCriteriaMet=True:CompletionsReached', 'Complete=True:CompletionsReached']);
    expect(podsOf(emu, created)).toHaveLength(1);

    expectOk(await k.kubectl(['delete', 'job', 'rotate-now', '-n', NS]));
    await sim.waitFor(() => podsOf(emu, created).length === 0, { what: 'the garbage collector to delete the Job’s Pod' });
    expect(emu.getObject('v1', 'Pod', NS, running.metadata.name!)).toBeUndefined();
  });

  it('fails a Job past its backoffLimit and removes its running Pods', async () => {
    cluster = await startCluster({ nodes: nodes(1) });
    const { emu, sim } = cluster;
    emu.createObject(job('flaky', { restartPolicy: 'Never', terminationGracePeriodSeconds: 1 }, { backoffLimit: 1, parallelism: 2, completions: 4 }));
    const first = await sim.waitFor(() => {
      const running = (emu.listObjects('v1', 'Pod', NS) as Pod[]).filter((p) => p.metadata.labels?.['job-name'] === 'flaky' && p.status?.phase === 'Running');
      return running.length === 2 ? running : undefined;
    }, { what: 'two Running Pods (parallelism 2)' });
    for (const p of first) emu.updateObject({ ...p, status: { ...p.status, phase: 'Failed' } });
    const failed = await sim.waitFor(() => {
      const s = emu.getObject('batch/v1', 'Job', NS, 'flaky')?.['status'] as Wire;
      return s?.conditions?.some((c: Wire) => c.type === 'Failed') ? s : undefined;
    }, { what: 'the Failed condition', timeoutMs: 10_000 });
    expect(failed.failed).toBe(2);
    expect(failed.conditions.find((c: Wire) => c.type === 'Failed')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    const live = (emu.listObjects('v1', 'Pod', NS) as Pod[]).filter((p) => p.metadata.labels?.['job-name'] === 'flaky' && p.status?.phase !== 'Failed');
    expect(live).toEqual([]);
  });

  it('runs no Pod while a Job is suspended, and starts it when resumed', async () => {
    cluster = await startCluster({ nodes: nodes(1) });
    const { emu, sim } = cluster;
    emu.createObject(job('later', { restartPolicy: 'OnFailure' }, { suspend: true }));
    const suspended = await sim.waitFor(() => {
      const s = emu.getObject('batch/v1', 'Job', NS, 'later')?.['status'] as Wire;
      return s?.conditions?.some((c: Wire) => c.type === 'Suspended' && c.status === 'True') ? s : undefined;
    }, { what: 'the Suspended condition' });
    await sim.settle();
    expect(suspended.startTime).toBeUndefined();
    expect((emu.listObjects('v1', 'Pod', NS) as Pod[]).filter((p) => p.metadata.labels?.['job-name'] === 'later')).toEqual([]);
    const current = emu.getObject('batch/v1', 'Job', NS, 'later')!;
    emu.updateObject({ ...current, spec: { ...(current['spec'] as Wire), suspend: false } });
    await sim.waitFor(() => (emu.listObjects('v1', 'Pod', NS) as Pod[]).find((p) => p.metadata.labels?.['job-name'] === 'later' && p.status?.phase === 'Running'), {
      what: 'a Running Pod once resumed',
    });
    const resumed = emu.getObject('batch/v1', 'Job', NS, 'later')!['status'] as Wire;
    expect(resumed.conditions.find((c: Wire) => c.type === 'Suspended')).toMatchObject({ status: 'False', reason: 'JobResumed' });
    expect(resumed.startTime).toEqual(expect.any(String));
  });
});
