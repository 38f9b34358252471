/**
 * What `par-identity emulator` starts: the enrollment emulator, with --kube the Kubernetes API emulator
 * seeded as a lab cluster, and the lab's agent configs. Here, not in src/commands/emulator.ts, so the
 * product never imports emulator code: the command loads dist/emulators.js at run time and calls this
 * through the narrow contract it declares (EmulatorBundle).
 */
import type { EmulatorBundle } from '../src/commands/emulator.js';
import { describeEmulator, startEnrollmentEmulator } from './enrollment/index.js';
import { helmClusterAgentObjects } from './helm-cluster-agent.js';
import { seedNamespaces, startKubeEmulator } from './kube/index.js';
import { labClusterAgent, labShellLines, prepareLab } from './lab.js';

export const startEmulators: EmulatorBundle['startEmulators'] = async (options) => {
  const enrollment = await startEnrollmentEmulator({ port: options.port });
  const info: Record<string, unknown> = { enrollmentUrl: enrollment.url, otherHostUrl: enrollment.otherHostUrl };
  const lines = describeEmulator(enrollment);
  let closeKube: (() => Promise<void>) | undefined;
  let kubeForLab: Parameters<typeof prepareLab>[1];
  if (options.kube) {
    const kube = await startKubeEmulator({ port: options.kubePort });
    seedNamespaces(kube, ['default', 'kube-system', 'datadog']);
    // The cluster agent as the Helm chart deploys it, scaled to 0, with the lab's settings (site, keys,
    // cluster name, identity Secret: docs/emulators.md): `rotate-par-identity --agent
    // deployment/datadog-cluster-agent -n datadog` reads them there, and off-cluster its labels are how
    // a rotation knows datadog is the agent's namespace (docs/protocol.md §6c).
    for (const obj of helmClusterAgentObjects(labClusterAgent(enrollment.url))) kube.createObject(obj as never);
    closeKube = () => kube.close();
    info.kubeUrl = kube.url;
    lines.push(`Kubernetes API emulator listening on ${kube.url} (namespaces default, kube-system, datadog)`);
    if (options.kubeconfigOut) {
      // Written by the caller (the product's own file writer and its errors), not here.
      await options
        .writeKubeconfig(options.kubeconfigOut, kube.kubeconfig({ token: kube.adminToken, namespace: 'datadog' }))
        .catch(async (err: unknown) => {
          await Promise.all([enrollment.close(), kube.close()]);
          throw err;
        });
      info.kubeconfig = options.kubeconfigOut;
      lines.push(`  admin kubeconfig:  ${options.kubeconfigOut}`);
    }
    kubeForLab = {
      writeKubeconfig: (path) => kube.writeKubeconfig(path, { token: kube.adminToken, namespace: 'datadog' }),
      ...(options.kubeconfigOut ? { kubeconfig: options.kubeconfigOut } : {}),
    };
  }
  const lab = await prepareLab(enrollment.url, kubeForLab);
  info.lab = { dir: lab.dir, config: lab.config, ...(lab.clusterConfig ? { clusterConfig: lab.clusterConfig } : {}), env: lab.env };
  lines.push('', ...labShellLines(lab), '');
  return {
    info,
    lines,
    requests: () => enrollment.requests.length,
    close: async () => {
      await Promise.all([enrollment.close(), closeKube?.(), lab.remove()]);
    },
  };
};
