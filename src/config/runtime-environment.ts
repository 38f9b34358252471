import { programName } from '../single-executable.js';
import { existsSync, readFileSync } from 'node:fs';

// Where the runner runs decides the restart command we print: the Go agent only reads its identity
// at start-up, so a rotated file is inert until the process restarts.

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

interface RestartHint {
  where: 'kubernetes' | 'systemd' | 'generic';
  command?: string;
  text: string;
}

function podNamespace(): string | undefined {
  try {
    return readFileSync(`${SERVICE_ACCOUNT_DIR}/namespace`, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Deployment Pods are <name>-<rs hash>-<5 chars>, DaemonSet Pods <name>-<5 chars>. */
function workloadFromPodName(pod: string): string | undefined {
  const deployment = /^(.+)-[a-z0-9]{6,10}-[a-z0-9]{5}$/.exec(pod);
  if (deployment) return `deployment/${deployment[1]}`;
  const daemonset = /^(.+)-[a-z0-9]{5}$/.exec(pod);
  return daemonset ? `daemonset/${daemonset[1]}` : undefined;
}

export function restartHint(env: NodeJS.ProcessEnv, hasSystemd = existsSync('/run/systemd/system')): RestartHint {
  if (env.KUBERNETES_SERVICE_HOST) {
    const ns = podNamespace() ?? '<namespace>';
    const workload = (env.HOSTNAME && workloadFromPodName(env.HOSTNAME)) ?? 'deployment/<name>';
    // Our rollout (checks room, create-before-delete), not a bare `kubectl rollout restart`.
    const command = `${programName()} rollout ${workload} -n ${ns}`;
    return {
      where: 'kubernetes',
      command,
      text: `Restart the runner's Pods so they load the new identity: ${command} (workload guessed from the Pod name ${env.HOSTNAME ?? '?'}; check it)`,
    };
  }
  if (hasSystemd) {
    const command = 'sudo systemctl restart datadog-agent-action.service';
    return { where: 'systemd', command, text: `Restart the Private Action Runner so it loads the new identity: ${command}` };
  }
  return { where: 'generic', text: 'Restart the Private Action Runner process (datadog-agent-action) so it loads the new identity.' };
}
