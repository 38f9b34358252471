import { ConfigError, StorageError } from '../errors.js';
import type { Io } from '../io.js';
import type { ClusterTarget } from '../kube/cluster-connection.js';
import type { SecretRef } from '../kube/identity-secret.js';
import type { Reporter } from '../output.js';
import { clusterTargetAccess } from '../rotation/cluster-session.js';
import type { TargetOptions } from '../rotation/options.js';
import { loadTargetConfig, locateClusterSecret } from '../rotation/resolve-target.js';
import { preflightIdentityDirectory } from '../storage/index.js';

// The Secret watch follows, the connection it follows it on, and the checks made before it starts:
// shared by `par-identity watch` and the API's watchIdentity.

function requireWatchEnabled(config: { getBool(key: string): boolean; sourceOf(key: string): string }): void {
  for (const key of ['private_action_runner.enabled', 'private_action_runner.identity_use_k8s_secret']) {
    if (!config.getBool(key)) {
      throw new ConfigError(
        'WATCH_DISABLED',
        `${key} is false (from ${config.sourceOf(key)}): this runner does not take its identity from a Secret`,
        'Nothing is watched. Set private_action_runner.enabled and private_action_runner.identity_use_k8s_secret to true (or DD_PRIVATE_ACTION_RUNNER_ENABLED=true), then run again.',
      );
    }
  }
}

/**
 * The Secret `watch` follows and the connection to follow it on: the cluster agent config, the
 * run's cluster connection, the Secret's namespace and name, and the check that this config keeps
 * an enabled runner identity in a Secret. Shared with the API's watchIdentity (src/api).
 */
export async function resolveWatchedSecret(
  options: Pick<TargetOptions, 'cfgPath' | 'extraCfg' | 'kubeconfig' | 'context' | 'namespace' | 'secretName'>,
  io: Io,
  report: Reporter,
): Promise<{ conn: ClusterTarget; ref: SecretRef }> {
  const config = await loadTargetConfig('cluster-secret', options, io, report);
  // The config's own refusal first: it holds whatever the cluster says.
  requireWatchEnabled(config);
  const { session, resolved } = await locateClusterSecret(config, clusterTargetAccess(options, { kubeconfig: config.getString('kubernetes_kubeconfig_path') }, io, report), { ...options, readOnly: true }, io, report);
  return { conn: session.conn, ref: { namespace: resolved.namespace, name: resolved.name } };
}

/** An --output that cannot be written is found now, not at the first rotation. */
export async function checkOutput(output: string): Promise<void> {
  try {
    await preflightIdentityDirectory(output);
  } catch (err) {
    if (!(err instanceof StorageError)) throw err;
    throw new StorageError(err.code, `--output ${output}: ${err.message}`, 'Nothing is watched. Make the directory of --output writable by this user, or choose another --output, then start watch again.', err.details);
  }
}
