import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY, type EnrollmentEmulator, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import { type CliRun, type RunOptions, runCli } from '../e2e/run-cli.js';
import type { TestCluster } from './test-cluster.js';

// A cluster agent's world on a test cluster (emulated or real): its namespace, its config
// (datadog-cluster.yaml), the Datadog enrollment emulator, and the file tree of its Pod (the
// service-account namespace file), so that the binary runs as it would inside the agent's Pod.

export const SECRET = 'private-action-runner-identity';

export interface AgentWorld {
  ns: string;
  dir: string;
  enrollment: EnrollmentEmulator;
  /** Env of a run "inside the agent's Pod in ns" (the service-account namespace file). */
  env: Record<string, string | undefined>;
  run(args: string[], options?: RunOptions): Promise<CliRun>;
  /** rotate-par-identity -c <config> --kubeconfig <kubeconfig or the admin one>. */
  rotate(extra?: string[], options?: RunOptions & { kubeconfig?: string }): Promise<CliRun>;
  secretData(name?: string): Promise<Record<string, string>>;
  enrollCalls(): number;
  close(): Promise<void>;
}

export async function agentWorld(cluster: TestCluster, prefix = 'dd'): Promise<AgentWorld> {
  const ns = await cluster.freshNamespace(prefix);
  const enrollment = await startEnrollmentEmulator();
  const dir = join(cluster.dir, ns);
  const sa = join(dir, 'podroot/var/run/secrets/kubernetes.io/serviceaccount');
  await mkdir(sa, { recursive: true });
  await writeFile(join(sa, 'namespace'), ns);
  const yaml = [
    `api_key: ${DEFAULT_API_KEY}`,
    `app_key: ${DEFAULT_APP_KEY}`,
    `dd_url: ${enrollment.url}`,
    'cluster_name: e2e-cluster',
    'private_action_runner:',
    '  enabled: true',
    '',
  ].join('\n');
  await writeFile(join(dir, 'datadog-cluster.yaml'), yaml);
  const env = {
    DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
    PAR_IDENTITY_RETRY_INITIAL_MS: '20',
    NO_COLOR: '1',
    HOME: dir,
    PAR_IDENTITY_SA_ROOT: join(dir, 'podroot'),
    // The test runner's own KUBECONFIG (the admin one, on the real cluster) is not the agent's.
    KUBECONFIG: undefined,
  };
  const world: AgentWorld = {
    ns,
    dir,
    enrollment,
    env,
    run: (args, options = {}) => runCli(args, { timeoutMs: 60_000, ...options, env: { ...env, ...options.env } }),
    rotate: (extra = [], options = {}) =>
      world.run(['rotate-par-identity', '-c', dir, '--kubeconfig', options.kubeconfig ?? cluster.adminKubeconfig, ...extra], options),
    async secretData(name = SECRET) {
      const s = await cluster.getJson<{ data?: Record<string, string> }>('secret', name, ns);
      return Object.fromEntries(Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    },
    enrollCalls: () => enrollment.requests.filter((r) => r.route === 'enroll').length,
    close: () => enrollment.close(),
  };
  return world;
}
