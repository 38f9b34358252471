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
      const run = spawnSync('bash', ['-euc', script], {
        env: cleanEnv({ PAR_NODE: process.execPath, PAR_BIN: BIN, KUBECONFIG: undefined }),
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.status, run.stderr).toBe(0);
      const [local, cluster] = run.stdout
        .trim()
        .split('\n')
        .map((l) => (l.startsWith('{') ? JSON.parse(l) : l)) as { status: string }[];
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

/** Whether the built binary has helper "agent"'s --agent (issue 30): the no-config form needs it. */
const agentFlagShipped = spawnSync(process.execPath, [BIN, 'rotate-par-identity', '--help'], { encoding: 'utf8' }).stdout.includes(
  '--agent ',
);

describe('par-identity emulator --kube: a cluster agent in the Helm layout with the lab settings', () => {
  async function lab(): Promise<{ cli: ReturnType<typeof startCli>; paste: string; kubeconfig: string; enrollmentUrl: string }> {
    const cli = startCli(['emulator', '--kube']);
    const out = await untilStopHint(cli);
    const lines = out.split('\n');
    const start = lines.findIndex((l) => l.startsWith('# Lab: paste'));
    const paste = lines.slice(start, lines.indexOf('', start)).join('\n');
    const kubeconfig = /^export KUBECONFIG=(.+)$/m.exec(paste)![1]!;
    const enrollmentUrl = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
    return { cli, paste, kubeconfig, enrollmentUrl };
  }

  it('seeds deployment/datadog-cluster-agent whose env and keys Secret hold the lab config’s settings', async () => {
    const { cli, paste, kubeconfig, enrollmentUrl } = await lab();
    try {
      const script = `${paste}\ncat "$PAR_LAB/datadog-cluster.yaml"`;
      const config = spawnSync('bash', ['-euc', script], { env: cleanEnv({ KUBECONFIG: undefined }), encoding: 'utf8' }).stdout;
      // Through the emulator's API, as any client sees it.
      const { KubeConfig, AppsV1Api, CoreV1Api } = await import('@kubernetes/client-node');
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      const d = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'datadog-cluster-agent', namespace: 'datadog' });
      expect(d.metadata?.labels).toMatchObject({
        'app.kubernetes.io/component': 'cluster-agent',
        'agent.datadoghq.com/component': 'cluster-agent',
        'app.kubernetes.io/managed-by': 'Helm',
      });
      const container = d.spec!.template.spec!.containers.find((c) => c.name === 'cluster-agent')!;
      expect(container.image).toMatch(/cluster-agent:\d+\.\d+\.\d+$/);
      const env = Object.fromEntries(
        (container.env ?? []).map((e) => [e.name, e.value ?? `<${e.valueFrom?.secretKeyRef?.name}/${e.valueFrom?.secretKeyRef?.key}>`]),
      );
      const setting = (key: string) => new RegExp(`^${key}: (.+)$`, 'm').exec(config)?.[1];
      expect(env).toMatchObject({
        DD_CLUSTER_NAME: setting('cluster_name'),
        DD_KUBE_RESOURCES_NAMESPACE: setting('kube_resources_namespace'),
        DD_DD_URL: setting('dd_url'),
        DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
        DD_PRIVATE_ACTION_RUNNER_ENABLED: 'true',
        // The lab config names no Secret: the agent's default, which the Deployment names explicitly.
        DD_PRIVATE_ACTION_RUNNER_IDENTITY_SECRET_NAME: 'private-action-runner-identity',
        DD_API_KEY: '<datadog-secret/api-key>',
        DD_APP_KEY: '<datadog-secret/app-key>',
      });
      expect(setting('dd_url')).toBe(enrollmentUrl);
      const keys = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name: 'datadog-secret', namespace: 'datadog' });
      const decoded = (k: string) => Buffer.from(keys.data![k]!, 'base64').toString();
      expect(decoded('api-key')).toBe(setting('api_key'));
      expect(decoded('app-key')).toBe(setting('app_key'));
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exit;
    }
  });

  // Waits for helper "agent"'s --agent (issue 30): turns on by itself once the binary has it.
  it.skipIf(!agentFlagShipped)(
    'rotate-par-identity --agent deployment/datadog-cluster-agent -n datadog works with no local config',
    async () => {
      const { cli, paste } = await lab();
      try {
        const script = `${paste}\n"$PAR_NODE" "$PAR_BIN" rotate-par-identity --agent deployment/datadog-cluster-agent -n datadog --json`;
        const run = spawnSync('bash', ['-euc', script], {
          env: cleanEnv({ PAR_NODE: process.execPath, PAR_BIN: BIN, KUBECONFIG: undefined }),
          encoding: 'utf8',
          timeout: 30_000,
        });
        expect(run.status, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout)).toMatchObject({ status: 'ok', namespace: 'datadog', secretName: 'private-action-runner-identity' });
      } finally {
        cli.child.kill('SIGTERM');
        await cli.exit;
      }
    },
  );
});
