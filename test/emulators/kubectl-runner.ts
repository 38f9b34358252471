import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { findKubectl } from './kube-helpers.js';

// The real kubectl against an emulator kubeconfig, with its own cache directory so discovery is
// never shared between tests or taken from the user's ~/.kube.

export const kubectlPath = findKubectl();
/** CI installs kubectl (Debian kubernetes-client): there a missing kubectl fails instead of skipping. */
export const kubectlRequired = process.env['CI'] === 'true';

export interface KubectlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function kubectlIn(dir: string, kubeconfig: string) {
  return (args: string[], input?: string): Promise<KubectlRun> =>
    new Promise((resolve, reject) => {
      const child = spawn(kubectlPath!, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'kubectl-cache'), ...args], {
        stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        env: { ...process.env, KUBECONFIG: '', HOME: dir },
      });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d) => {
        stdout += d;
      });
      child.stderr!.on('data', (d) => {
        stderr += d;
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      if (input !== undefined) child.stdin!.end(input);
    });
}
