/**
 * The lab `par-identity emulator` prepares: agent configs pointing at the emulators, written to a
 * temp dir it names, and the shell lines that make the next `par-identity` command use them. Without
 * DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS the CLI derives the enrollment host from `site` and would reach
 * the real Datadog API instead of dd_url (docs/protocol.md §3), hence it is always among the lines.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from './enrollment/options.js';
import type { HelmClusterAgentOptions } from './helm-cluster-agent.js';

interface Lab {
  dir: string;
  /** The PAR container's agent config (its identity file lands beside it). */
  config: string;
  /** The cluster agent's config (identity in the Secret of namespace datadog); with --kube only. */
  clusterConfig?: string;
  kubeconfig?: string;
  /** Variable → value: what the shell lines export. */
  env: Record<string, string>;
  remove(): Promise<void>;
}

/** A POSIX shell word: single-quoted unless plainly safe. */
const shellWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

/** The lab's cluster-agent settings: the same in datadog-cluster.yaml and in the seeded Helm Deployment. */
const LAB_CLUSTER = { clusterName: 'par-lab', namespace: 'datadog', identitySecretName: 'private-action-runner-identity' } as const;

/**
 * The cluster agent `emulator --kube` seeds, in the Helm layout, with the settings of the lab's
 * datadog-cluster.yaml: the lab's keys in the keys Secret, its cluster name, the enrollment emulator as
 * dd_url, the identity Secret the lab's config names (the agent's default name).
 */
export function labClusterAgent(enrollmentUrl: string): HelmClusterAgentOptions {
  return { ...LAB_CLUSTER, apiKey: DEFAULT_API_KEY, appKey: DEFAULT_APP_KEY, ddUrl: enrollmentUrl };
}

export async function prepareLab(
  enrollmentUrl: string,
  kube?: { writeKubeconfig(path: string): Promise<void>; kubeconfig?: string },
): Promise<Lab> {
  const dir = await mkdtemp(join(tmpdir(), 'par-identity-lab-'));
  const creds = [`api_key: ${DEFAULT_API_KEY}`, `app_key: ${DEFAULT_APP_KEY}`, `dd_url: ${enrollmentUrl}`];
  const config = join(dir, 'datadog.yaml');
  // A fixed hostname: the hostname chain never asks this machine's cloud metadata or docker daemon.
  await writeFile(config, [...creds, 'hostname: par-lab', 'private_action_runner:', '  enabled: true', ''].join('\n'), { mode: 0o600 });
  const env: Record<string, string> = { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', PAR_LAB: dir };
  const lab: Lab = { dir, config, env, remove: () => rm(dir, { recursive: true, force: true }) };
  if (kube) {
    lab.clusterConfig = join(dir, 'datadog-cluster.yaml');
    const settings = [`cluster_name: ${LAB_CLUSTER.clusterName}`, `kube_resources_namespace: ${LAB_CLUSTER.namespace}`];
    await writeFile(lab.clusterConfig, [...creds, ...settings, 'private_action_runner:', '  enabled: true', ''].join('\n'), {
      mode: 0o600,
    });
    lab.kubeconfig = kube.kubeconfig ?? join(dir, 'kubeconfig');
    if (!kube.kubeconfig) await kube.writeKubeconfig(lab.kubeconfig);
    env.KUBECONFIG = lab.kubeconfig;
  }
  return lab;
}

/** The lines to paste: comments and `export`s only, so `eval "$(…)"` of them is safe too. */
export function labShellLines(lab: Lab): string[] {
  return [
    `# Lab: paste these lines into a shell (agent configs in ${lab.dir}, removed when the emulator stops):`,
    ...Object.entries(lab.env).map(([name, value]) => `export ${name}=${shellWord(value)}`),
    '# then, for the PAR container (identity file beside the config):',
    '#   par-identity rotate-identity -c "$PAR_LAB/datadog.yaml"',
    ...(lab.clusterConfig
      ? [
          '# and for the cluster agent (the identity Secret in namespace datadog), with its settings read from',
          '# the seeded cluster-agent Deployment, or with the same settings from the lab config:',
          '#   par-identity rotate-par-identity --agent deployment/datadog-cluster-agent -n datadog',
          '#   par-identity rotate-par-identity -c "$PAR_LAB/datadog-cluster.yaml"',
        ]
      : []),
  ];
}
