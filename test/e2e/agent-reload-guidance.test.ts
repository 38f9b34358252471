import { afterEach, describe, expect, it } from 'vitest';
import { type ClusterFixture, clusterFixture } from './cluster-fixture.js';

// Restart guidance follows the cluster agent version that runs (docs/protocol.md §6d): the built binary
// against the emulated cluster, the version read from the cluster-agent Deployment's image tag (or the
// Pod's, for status --pods). A version known to read its Secret only at start gets a restart; a version
// not known either way gets both possibilities and still the restart, never a promised reload.

const NS = 'datadog';
const DEPLOYMENT = 'dd-release-cluster-agent';
const FINGERPRINT_ANNOTATION = 'par-identity.datadoghq.com/identity-fingerprint';

let fx: ClusterFixture;
afterEach(async () => fx?.close());

// biome-ignore lint/suspicious/noExplicitAny: test edits of emulator objects
type Obj = Record<string, any>;

function setAgentImage(image: string): void {
  const d = structuredClone(fx.kube.getObject('apps/v1', 'Deployment', NS, DEPLOYMENT)) as Obj;
  d.spec.template.spec.containers[0].image = image;
  fx.kube.updateObject(d as never);
}

const json = (s: string) => JSON.parse(s) as Obj;

describe('next: and restartHint after a cluster Secret rotation', () => {
  it('a 7.81.x agent reads the Secret only at start: a restart, citing why', async () => {
    fx = await clusterFixture();
    setAgentImage('gcr.io/datadoghq/cluster-agent:7.81.1');
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    const run = await fx.rotate(['--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `next: cluster agent 7.81.1 (image of deployment/${DEPLOYMENT}) reads the identity only at start (7.81.x reads the identity Secret only when it starts: its own rotate-par-identity ends with \`kubectl rollout restart\` (datadog-agent #52031); the watcher of #52006 was not merged): restart it create-before-delete: par-identity rollout deployment/${DEPLOYMENT} -n ${NS}`,
    );
    const out = json((await fx.rotate(['--no-verify', '--json'])).stdout);
    expect(out.agentReload).toMatchObject({ reloads: 'none', agentVersion: '7.81.1', versionSource: `image of deployment/${DEPLOYMENT}` });
    expect(out.restartHint).toContain(`rollout deployment/${DEPLOYMENT}`);
  });

  it('a floating tag says both possibilities and still gives the restart', async () => {
    fx = await clusterFixture();
    setAgentImage('gcr.io/datadoghq/cluster-agent:latest');
    const run = await fx.rotate(['--no-verify']);
    expect(run.code, run.stderr).toBe(0);
    const next = run.stdout.split('\n').find((l) => l.startsWith('next: '))!;
    expect(next).toContain('agent version "latest" is not a release number');
    expect(next).toMatch(/may reload when the Secret's urn changes .* or only read it at start/);
    expect(next).toContain(
      `nothing is promised: restart it create-before-delete to be sure: par-identity rollout deployment/${DEPLOYMENT}`,
    );
    expect(next).not.toContain('no restart needed');
  });

  it('--agent-version gives the version when the image does not, and a version newer than those read is unknown', async () => {
    fx = await clusterFixture();
    setAgentImage('gcr.io/datadoghq/cluster-agent@sha256:0123456789abcdef');
    const out = json((await fx.rotate(['--no-verify', '--agent-version', '7.90.0', '--json'])).stdout);
    expect(out.agentReload).toMatchObject({ reloads: 'unknown', agentVersion: '7.90.0', versionSource: '--agent-version' });
    expect(out.agentReload.why).toContain('newer than the versions read');
    expect(out.restartHint).toContain('rollout deployment/');
  });

  it('the Deployment image beats --agent-version, as what runs', async () => {
    fx = await clusterFixture();
    setAgentImage('gcr.io/datadoghq/cluster-agent:7.81.0');
    const out = json((await fx.rotate(['--no-verify', '--agent-version', '7.90.0', '--json'])).stdout);
    expect(out.agentReload).toMatchObject({ reloads: 'none', agentVersion: '7.81.0', versionSource: `image of deployment/${DEPLOYMENT}` });
  });
});

describe('status --pods by the version each Pod runs', () => {
  function pod(name: string, image: string, fingerprint?: string): void {
    fx.kube.createObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: NS,
        labels: { app: 'dca' },
        ...(fingerprint ? { annotations: { [FINGERPRINT_ANNOTATION]: fingerprint } } : {}),
      },
      spec: { containers: [{ name: 'cluster-agent', image }] },
    } as never);
  }

  it('a Pod whose agent version is unknown is never reported as running another identity', async () => {
    fx = await clusterFixture();
    expect((await fx.rotate(['--no-verify'])).code).toBe(0);
    fx.kube.createObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'datadog-cluster-agent', namespace: NS },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'dca' } },
        template: { metadata: { labels: { app: 'dca' } }, spec: { containers: [{ name: 'cluster-agent', image: 'x' }] } },
      },
    } as never);
    const fingerprint = String(
      json((await fx.run(['status', '--secret', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--json'])).stdout).fingerprint,
    );
    pod('dca-new', 'gcr.io/datadoghq/cluster-agent:7.81.1', fingerprint);
    pod('dca-old', 'gcr.io/datadoghq/cluster-agent:7.81.1', 'an-older-fingerprint');
    pod('dca-floating', 'gcr.io/datadoghq/cluster-agent:latest');
    const run = await fx.run(['status', '--secret', '--pods', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig, '--json']);
    // Pods on the previous identity, or that may be: exit 17 (docs/output.md), whatever else the view says.
    expect(run.code, run.stderr).toBe(17);
    const view = json(run.stdout);
    const by = Object.fromEntries((view.pods as Obj[]).map((p) => [p.name, p]));
    expect(by['dca-new']).toMatchObject({ identity: 'current', runsCurrent: true, agentVersion: '7.81.1' });
    expect(by['dca-old']).toMatchObject({ identity: 'previous', runsCurrent: false });
    expect(by['dca-old'].how).toContain('#52031');
    expect(by['dca-floating']).toMatchObject({ identity: 'unknown', runsCurrent: false, agentVersion: 'latest' });
    expect(view.previousRunnerRemovable).toBe(false);
    // Without the stale 7.81.1 Pod, the floating one alone still keeps the previous runner, said as "may".
    fx.kube.deleteObject('v1', 'Pod', NS, 'dca-old');
    const text = await fx.run(['status', '--secret', '--pods', '-c', fx.dir, '--kubeconfig', fx.adminKubeconfig]);
    expect(text.code, text.stderr).toBe(17); // "may": still a reason to keep the previous runner (docs/output.md)
    expect(text.stdout).toMatch(/dca-floating\s+\S+\s+UNKNOWN/);
    expect(text.stdout).not.toMatch(/dca-floating.*OTHER/);
    expect(text.stdout).toContain('1 of 2 Pods may still run the previous identity (dca-floating;');
    expect(text.stdout).toContain('keep the previous runner in Datadog until they restart');
  });
});
