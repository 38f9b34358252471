import { type KubeEmulator, type KubeObject, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';
import { agreeingAgent, clusterAgentDeployment } from './cluster-fixture.js';
import { storedDeploymentRollouts } from './stored-deployment.js';

// The Kubernetes emulator with a one-replica `par` Deployment whose rollouts finish a moment after
// each restart (stored Pods, test/e2e/stored-deployment.ts): what the rotation-pipeline and API
// tests roll out onto.

/**
 * `agent`: the cluster agent runs with these settings (the Helm layout, its keys in KEYS_SECRET): a
 * local -c that states the same agrees with it (docs/configuration.md, "The running agent's settings").
 */
export async function clusterWithRunner(
  namespaces: string[],
  namespace: string,
  agent?: { enrollmentUrl: string; env?: Record<string, unknown>[] },
  /** false: the replacement Pods of a restart never become Ready (a rollout that stalls). */
  newPodsReady = true,
): Promise<KubeEmulator> {
  const kube = await startKubeEmulator();
  seedNamespaces(kube, namespaces);
  // Off-cluster, the cluster agent's labelled Deployment is what places its cluster id (docs/protocol.md §6c).
  if (agent)
    for (const object of agreeingAgent(namespace, agent.enrollmentUrl, agent.env ? { env: agent.env } : {})) kube.createObject(object);
  else kube.createObject(clusterAgentDeployment(namespace));
  kube.createObject({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'par', namespace },
    spec: {
      replicas: 1,
      // The apiserver's default, stated: the emulator stores a Deployment as written.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      selector: { matchLabels: { app: 'par' } },
      template: {
        metadata: { labels: { app: 'par' } },
        spec: {
          containers: [
            {
              name: 'runner',
              image: 'par:1',
              readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
              resources: { requests: { cpu: '100m', memory: '64Mi' } },
            },
          ],
        },
      },
    },
  } as KubeObject);
  storedDeploymentRollouts(kube, namespace, 'par').newPodsReady = newPodsReady;
  return kube;
}
