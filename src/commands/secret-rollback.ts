import { StorageError, VerificationError } from '../errors.js';
import type { Io } from '../io.js';
import { buildIdentitySecret, kubeFailure, readIdentitySecret, SECRET_KEYS, writeIdentitySecret } from '../kube/index.js';
import { type CommandResult, createReporter, type OutputOptions } from '../output.js';
import { type ClusterTargetOptions, resolveClusterTarget } from './cluster-target.js';
import { describeVerify, type VerifyReport, verifyWithConfig } from './verify-step.js';

export interface SecretRollbackOptions extends OutputOptions, ClusterTargetOptions {
  verify: boolean;
  timeoutSeconds: number;
}

/** Swaps previous_* and the current identity in one update guarded by the resourceVersion read. */
export async function run(options: SecretRollbackOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  const cluster = await resolveClusterTarget(options, io, report);
  const { core, ref } = cluster;
  const where = `${ref.namespace}/${ref.name}`;
  const state = await readIdentitySecret(core, ref);
  if (state.state === 'missing' || !state.previous) {
    throw new StorageError('NO_BACKUP', `Secret ${where} keeps no previous identity to roll back to`, 'Nothing was changed. A previous identity is kept only by rotate-par-identity without --no-keep-previous.');
  }
  const values: Record<string, string> = { ...state.data };
  values[SECRET_KEYS.privateKey] = state.previous.record.privateKey;
  values[SECRET_KEYS.urn] = state.previous.record.urn;
  if (state.identity) {
    values[SECRET_KEYS.previousPrivateKey] = state.identity.record.privateKey;
    values[SECRET_KEYS.previousUrn] = state.identity.record.urn;
  } else {
    delete values[SECRET_KEYS.previousPrivateKey];
    delete values[SECRET_KEYS.previousUrn];
  }
  report.step(`restore ${state.previous.record.urn} (guarded by resourceVersion ${state.resourceVersion})`);
  let written: import('@kubernetes/client-node').V1Secret;
  try {
    written = await writeIdentitySecret(core, ref, buildIdentitySecret(ref, state.secret, values), { create: false, dryRun: false });
  } catch (err) {
    throw kubeFailure(err, `updating Secret ${where}`, 'The Secret was not changed; read it again with `par-identity status --secret` and retry.');
  }
  let verify: VerifyReport = { performed: false };
  if (options.verify) verify = await verifyWithConfig(cluster.config, state.previous, 'cluster_agent', io, report, options.timeoutSeconds);
  const urn = state.previous.record.urn;
  if (verify.performed && !verify.ok) {
    throw new VerificationError(`rolled back to ${urn}, but the server did not accept it: ${verify.reason}`, 'Run `par-identity rollback --secret` again to roll forward, or rotate anew.', { urn });
  }
  return {
    command: 'rollback',
    data: { urn, replacedUrn: state.identity?.record.urn ?? null, fingerprint: state.previous.key.kid, namespace: ref.namespace, secretName: ref.name, resourceVersion: written.metadata?.resourceVersion ?? null, verify },
    summary: [
      `rolled back Secret ${where} to: ${urn}`,
      `  fingerprint: ${state.previous.key.kid}`,
      `  replaced:    ${state.identity?.record.urn ?? '(no decodable identity)'}, now kept as previous_urn`,
      `  verified:    ${describeVerify(verify)}`,
      `next: replicas running \`par-identity watch\` reload it; others: kubectl -n ${ref.namespace} rollout restart deployment/datadog-cluster-agent`,
    ],
  };
}
