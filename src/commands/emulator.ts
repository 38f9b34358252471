import type * as EmulatorBundle from '../emulators/bundle.js';
import { ParError } from '../errors.js';
import type { Io } from '../io.js';
import { type CommandResult, type OutputOptions, resultJson } from '../output.js';
import { runningAsSingleExecutable } from '../single-executable.js';
import { VERSION } from '../version.js';
import { writePrivateFile } from '../storage/index.js';

export interface EmulatorOptions extends OutputOptions {
  port: number;
  kube: boolean;
  kubePort: number;
  kubeconfigOut?: string;
  /** Nodes of a simulated cluster (scheduler, controllers, kubelets); 0 = API only. */
  simulateNodes: number;
}

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/**
 * The emulators are their own bundle, dist/emulators.js, next to the files of this bundle. The
 * specifier is computed at run time so the product bundler never follows it into the emulator code.
 */
async function loadEmulators(): Promise<typeof EmulatorBundle> {
  if (runningAsSingleExecutable()) {
    throw new ParError(
      'EMULATOR_UNAVAILABLE',
      'the single executable does not contain the emulators',
      `Run \`par-identity emulator\` from the npm package installed from a checkout (npm ci && npm pack, then npm install -g ./par-identity-${VERSION}.tgz: docs/install.md), or in the checkout itself (npm run build, then bin/par-identity.js emulator).`,
    );
  }
  const bundle = new URL('./emulators.js', import.meta.url).href;
  return (await import(bundle)) as typeof EmulatorBundle;
}

/** Long-running: prints where the emulators listen at once (a JSON line with --json), stops on SIGINT/SIGTERM. */
export async function run(options: EmulatorOptions, io: Io): Promise<CommandResult> {
  const { startEnrollmentEmulator, describeEmulator, startKubeEmulator, seedNamespaces, prepareLab, labShellLines, helmClusterAgentObjects, labClusterAgent } = await loadEmulators();
  const enrollment = await startEnrollmentEmulator({ port: options.port });
  const info: Record<string, unknown> = { enrollmentUrl: enrollment.url, otherHostUrl: enrollment.otherHostUrl };
  const lines = describeEmulator(enrollment);
  let closeKube: (() => Promise<void>) | undefined;
  let kubeForLab: Parameters<typeof prepareLab>[1];
  if (options.kube) {
    // Kubernetes time runs 10× faster than the wall clock so a demo rollout takes seconds.
    const simulation = options.simulateNodes
      ? { nodes: Array.from({ length: options.simulateNodes }, (_, i) => ({ name: `node-${i + 1}`, cpu: '2', memory: '4Gi' })), secondMs: 100, tickMs: 100, kubelet: { startDelayMs: 300, readyDelayMs: 400 } }
      : undefined;
    const kube = await startKubeEmulator({ port: options.kubePort, ...(simulation ? { simulation } : {}) });
    seedNamespaces(kube, ['default', 'kube-system', 'datadog']);
    // The cluster agent as the Helm chart deploys it, scaled to 0, with the lab's settings (site, keys,
    // cluster name, identity Secret: docs/emulators.md): `rotate-par-identity --agent
    // deployment/datadog-cluster-agent -n datadog` reads them there, and off-cluster its labels are how
    // a rotation knows datadog is the agent's namespace (docs/protocol.md §6c).
    for (const obj of helmClusterAgentObjects(labClusterAgent(enrollment.url))) kube.createObject(obj as never);
    closeKube = () => kube.close();
    info.kubeUrl = kube.url;
    lines.push(`Kubernetes API emulator listening on ${kube.url} (namespaces default, kube-system, datadog)`);
    if (simulation) lines.push(`  simulated cluster: ${simulation.nodes.map((n) => n.name).join(', ')} (2 cpu, 4Gi each; 1 Kubernetes second = 100 ms)`);
    if (options.kubeconfigOut) {
      // Written here, not by the emulator bundle, so a refusal is this bundle's own ParError (exit 7).
      await writePrivateFile(options.kubeconfigOut, kube.kubeconfig({ token: kube.adminToken, namespace: 'datadog' }), 'kubeconfig files').catch(async (err: unknown) => {
        await Promise.all([enrollment.close(), kube.close()]);
        throw err;
      });
      info.kubeconfig = options.kubeconfigOut;
      lines.push(`  admin kubeconfig:  ${options.kubeconfigOut}`);
    }
    kubeForLab = { writeKubeconfig: (path) => kube.writeKubeconfig(path, { token: kube.adminToken, namespace: 'datadog' }), ...(options.kubeconfigOut ? { kubeconfig: options.kubeconfigOut } : {}) };
  }
  const lab = await prepareLab(enrollment.url, kubeForLab);
  info.lab = { dir: lab.dir, config: lab.config, ...(lab.clusterConfig ? { clusterConfig: lab.clusterConfig } : {}), env: lab.env };
  lines.push('', ...labShellLines(lab), '');
  // Listen for the signals before saying "listening": a caller may stop us the moment it reads that.
  const stopped = untilSignal();
  if (options.json) io.stdout(`${JSON.stringify({ schemaVersion: 1, status: 'listening', command: 'emulator', ...info })}\n`);
  else io.stdout(`${lines.join('\n')}\nPress Ctrl-C to stop.\n`);
  const signal = await stopped;
  await Promise.all([enrollment.close(), closeKube?.(), lab.remove()]);
  return { json: resultJson('emulator', { stoppedBy: signal, requests: enrollment.requests.length }), summary: [`emulator stopped (${signal})`] };
}
