import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningCli, startCli } from '../e2e/run-cli.js';
import { type AgentWorld, agentWorld, SECRET } from './agent-world.js';
import { CLUSTER_KIND, eventually, only, startTestCluster, type TestCluster } from './test-cluster.js';

// `par-identity watch` as the agent's sidecar runs it: a ServiceAccount whose Role names only the
// one Secret (resourceNames: list and watch need the metadata.name field selector), a token from
// the TokenRequest API, the built binary following rotations.

let cluster: TestCluster;
let w: AgentWorld;
const running: RunningCli[] = [];
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.close();
});
beforeEach(async () => {
  w = await agentWorld(cluster, 'watch');
});
afterEach(async () => {
  for (const r of running.splice(0)) r.child.kill('SIGKILL');
  await w.close();
});

const lines = (r: RunningCli) =>
  r
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const written = (r: RunningCli) => lines(r).filter((l) => l.event === 'written');

async function startWatcher(): Promise<{ run: RunningCli; output: string }> {
  const kubeconfig = await cluster.serviceAccountKubeconfig(w.ns, 'watcher', [
    { apiGroups: [''], resources: ['secrets'], resourceNames: [SECRET], verbs: ['get', 'list', 'watch'] },
  ]);
  const output = join(w.dir, 'identity.json');
  const run = startCli(['watch', '-c', w.dir, '--kubeconfig', kubeconfig, '--output', output, '--json'], { env: w.env });
  running.push(run);
  return { run, output };
}

const urnIn = async (file: string) => (JSON.parse(await readFile(file, 'utf8')) as { urn: string }).urn;

describe(`watch on the ${CLUSTER_KIND} cluster`, () => {
  it('as a ServiceAccount limited to the one Secret by resourceNames, with a TokenRequest token: follows a rotation', async () => {
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const { run, output } = await startWatcher();
    await eventually(async () => written(run).length === 1, 'the first identity written');
    expect(await urnIn(output)).toBe((await w.secretData()).urn);
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const second = (await w.secretData()).urn;
    await eventually(async () => written(run).length === 2, 'the rotated identity written');
    expect(await urnIn(output)).toBe(second);
    expect(run.stderr()).not.toMatch(/forbidden/i);
  });

  const restart = only('real', 'stops and starts the kube-apiserver process; the emulator has no process to restart');
  it.skipIf(restart.skip)(`keeps the identity across an apiserver restart and applies the next change ${restart.label}`, async () => {
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const { run, output } = await startWatcher();
    await eventually(async () => written(run).length === 1, 'the first identity written');
    const first = await urnIn(output);
    await cluster.restartApiserver!();
    // While the apiserver was away the identity in service stays what it was.
    expect(await urnIn(output)).toBe(first);
    expect(run.child.exitCode).toBeNull();
    expect((await w.rotate(['--no-verify'])).code).toBe(0);
    const next = (await w.secretData()).urn;
    await eventually(async () => (await urnIn(output)) === next, 'the change after the restart applied', 60_000);
    expect(written(run)).toHaveLength(2);
  });
});
