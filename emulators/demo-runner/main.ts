import { parseArgs } from 'node:util';
import { clusterTargetFromConfig } from '../../src/kube/cluster-connection.js';
import { parseKubeconfigFile } from '../../src/kube/kubeconfig.js';
import { type DemoRunner, type DemoRunnerStats, startDemoReplicas } from './demo-runner.js';

// Entry point that starts N demo replicas in one process, for scripts (the demo, the bench):
//   node <bundle>/main.js --kubeconfig F --namespace NS --secret-name NAME --enrollment-url URL [--replicas N] [--interval-ms 50] [--no-calls]
// stdout gets JSON lines: {"event":"ready",...} once every replica has an identity, {"event":"loaded",...}
// per replica reload, and {"event":"stats",...} after SIGTERM/SIGINT, then the process exits by itself.

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    namespace: { type: 'string', default: 'default' },
    'secret-name': { type: 'string', default: 'private-action-runner-identity' },
    'enrollment-url': { type: 'string', default: '' },
    replicas: { type: 'string', default: '1' },
    'interval-ms': { type: 'string', default: '50' },
    'no-calls': { type: 'boolean', default: false },
  },
});

const line = (payload: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(payload)}\n`);

if (!values.kubeconfig) {
  process.stderr.write('demo-runner: --kubeconfig is required\n');
  process.exitCode = 2;
} else {
  const config = await parseKubeconfigFile(values.kubeconfig);
  const replicas: DemoRunner[] = startDemoReplicas(Number(values.replicas), {
    connect: () => clusterTargetFromConfig(config, { env: process.env, source: values.kubeconfig! }),
    namespace: values.namespace!,
    name: values['secret-name']!,
    enrollmentUrl: values['enrollment-url']!,
    // --no-calls: an idle watcher only (memory and request counts of the watch alone).
    intervalMs: values['no-calls'] ? 2 ** 31 - 1 : Number(values['interval-ms']),
  });
  for (const [index, replica] of replicas.entries()) {
    replica.watch.events.on('event', (e) => {
      if (e.type === 'loaded') line({ event: 'loaded', replica: index, reason: e.reason, fingerprint: e.fingerprint, at: e.at.getTime() });
    });
  }
  void Promise.all(replicas.map((r) => r.watch.ready)).then(
    () => line({ event: 'ready', replicas: replicas.length, pid: process.pid }),
    () => undefined,
  );
  const stop = async (signal: string) => {
    const stats: DemoRunnerStats[] = await Promise.all(replicas.map((r) => r.stop()));
    line({ event: 'stats', signal, replicas: stats });
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}
