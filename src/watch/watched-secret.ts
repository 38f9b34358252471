import { ConfigError, StorageError } from '../errors.js';
import type { Io } from '../io.js';
import type { ClusterTarget } from '../kube/cluster-connection.js';
import type { SecretRef } from '../kube/identity-secret.js';
import type { Reporter } from '../output.js';
import { clusterTargetAccess } from '../session/connection.js';
import { configPathGiven, type TargetOptions } from '../command-options.js';
import { existingSecretLayout, loadTargetConfig, locateClusterSecret } from '../session/resolve-target.js';
import { serviceAccountNamespace } from '../kube/service-account.js';
import type { AgentConfig } from '../config/agent-config.js';
import { preflightIdentityDirectory } from '../storage/index.js';

// The Secret watch follows, the connection it follows it on, and the checks made before it starts:
// shared by `par-identity watch` and the API's watchIdentity.

function requireWatchEnabled(config: { getBool(key: string): boolean; sourceOf(key: string): string }): void {
  for (const key of ['private_action_runner.enabled', 'private_action_runner.identity_use_k8s_secret']) {
    if (!config.getBool(key)) {
      throw new ConfigError(
        'WATCH_DISABLED',
        `${key} is false (from ${config.sourceOf(key)}): this runner does not take its identity from a Secret`,
        'Nothing is watched. Set private_action_runner.enabled and private_action_runner.identity_use_k8s_secret to true ' +
          '(or DD_PRIVATE_ACTION_RUNNER_ENABLED=true), then run again.',
      );
    }
  }
}

/**
 * The Secret `watch` follows and the connection to follow it on: the cluster agent config, the
 * run's cluster connection, the Secret's namespace and name, and the check that this config keeps
 * an enabled runner identity in a Secret. Shared with the API's watchIdentity (src/api).
 * Off-cluster, an explicit --secret-name and -n look nothing up (a sidecar's Role names only the
 * Secret); without them the running cluster agent is found and its settings used, as the commands do.
 */
export async function resolveWatchedSecret(
  options: Pick<
    TargetOptions,
    'cfgPath' | 'extraCfg' | 'cfgPathGiven' | 'kubeconfig' | 'context' | 'namespace' | 'secretName' | 'agent' | 'overrideAgentSettings'
  >,
  io: Io,
  report: Reporter,
): Promise<{ conn: ClusterTarget; ref: SecretRef }> {
  const config = await loadTargetConfig('cluster-secret', options, io, report);
  const offCluster = !serviceAccountNamespace(io.env);
  const explicit = Boolean(options.secretName && options.namespace);
  // The config's own refusal first: it holds whatever the cluster says. Off-cluster with no -c, no config was read: the flags are the choice.
  if (!offCluster || configPathGiven(options)) requireWatchEnabled(config);
  if (offCluster && !explicit) return followAgent(config, options, io, report);
  const { session, resolved } = await locateClusterSecret(
    config,
    clusterTargetAccess(options, { kubeconfig: config.getString('kubernetes_kubeconfig_path') }, io, report),
    { ...options, readOnly: true },
    io,
    report,
  );
  return { conn: session.conn, ref: { namespace: resolved.namespace, name: resolved.name } };
}

/** Off-cluster without --secret-name and -n: the Secret the running cluster agent reads (src/session). */
async function followAgent(
  local: AgentConfig,
  options: Parameters<typeof resolveWatchedSecret>[0],
  io: Io,
  report: Reporter,
): Promise<{ conn: ClusterTarget; ref: SecretRef }> {
  const { clusterAccess } = await import('../session/connection.js');
  const { resolveAgentSettings } = await import('../session/cluster-agent.js');
  const cluster = clusterAccess(options, { kubeconfig: local.getString('kubernetes_kubeconfig_path') }, io, report);
  const agent = await resolveAgentSettings(
    await cluster(),
    { ...options, cfgPathGiven: configPathGiven(options) },
    { config: local, env: io.env },
    report,
  );
  requireWatchEnabled(agent.config);
  const deployment = agent.agent?.read.deployment;
  const { session, resolved } = await locateClusterSecret(
    agent.config,
    cluster,
    { ...options, readOnly: true, ...(deployment ? { agentNamespace: deployment.namespace } : {}) },
    { ...io, env: agent.env },
    report,
  );
  const target = agent.agent ? await existingSecretLayout(session, resolved, agent.agent, options, report) : resolved;
  return { conn: session.conn, ref: { namespace: target.namespace, name: target.name } };
}

/** An --output that cannot be written is found now, not at the first rotation. */
export async function checkOutput(output: string): Promise<void> {
  try {
    await preflightIdentityDirectory(output);
  } catch (err) {
    if (!(err instanceof StorageError)) throw err;
    throw new StorageError(
      err.code,
      `--output ${output}: ${err.message}`,
      'Nothing is watched. Make the directory of --output writable by this user, or choose another --output, then start watch again.',
      err.details,
    );
  }
}
