import { KubernetesError, StorageError, VerificationError } from '../errors.js';
import type { DecodedIdentity } from '../identity/index.js';
import type { Io } from '../io.js';
import { readIdentitySecret, SECRET_KEYS } from '../kube/index.js';
import { type CommandResult, createReporter, type OutputOptions } from '../output.js';
import { type ClusterTargetOptions, resolveClusterTarget } from './cluster-target.js';
import { describeVerify, type VerifyReport, verifyWithConfig } from './verify-step.js';

export interface SecretStatusOptions extends OutputOptions, ClusterTargetOptions {
  verify: boolean;
  timeoutSeconds: number;
}

function summaryOf(identity: DecodedIdentity | undefined) {
  return identity ? { urn: identity.record.urn, orgId: identity.urn.orgId, runnerId: identity.urn.runnerId, region: identity.urn.region, fingerprint: identity.key.kid } : null;
}

export async function run(options: SecretStatusOptions, io: Io): Promise<CommandResult> {
  const report = createReporter(io, options);
  const cluster = await resolveClusterTarget(options, io, report);
  const state = await readIdentitySecret(cluster.core, cluster.ref);
  const where = `${cluster.ref.namespace}/${cluster.ref.name}`;
  if (state.state === 'missing') {
    throw new KubernetesError('SECRET_MISSING', `Secret ${where} does not exist`, 'Run `par-identity rotate-par-identity` to create it, or pass -n/--secret-name for the right one.');
  }
  if (!state.identity) {
    throw new StorageError('IDENTITY_CORRUPT', `Secret ${where} holds no valid identity: ${state.error?.message}`, 'Roll back with `par-identity rollback --secret` if a previous identity is kept, or rotate again.');
  }
  let verify: VerifyReport = { performed: false };
  if (options.verify) verify = await verifyWithConfig(cluster.config, state.identity, 'cluster_agent', io, report, options.timeoutSeconds);
  const current = summaryOf(state.identity);
  const previous = summaryOf(state.previous);
  const data = {
    namespace: cluster.ref.namespace,
    secretName: cluster.ref.name,
    resourceVersion: state.resourceVersion,
    current,
    previous,
    clusterId: state.data[SECRET_KEYS.clusterId] ?? null,
    labels: state.secret.metadata?.labels ?? {},
    verify,
  };
  if (verify.performed && !verify.ok) {
    throw new VerificationError(`the server did not accept ${current?.urn}: ${verify.reason}`, 'Rotate again, or roll back with `par-identity rollback --secret`.', { urn: current?.urn ?? null });
  }
  return {
    command: 'status',
    data,
    summary: [
      `secret: ${where} (resourceVersion ${state.resourceVersion})`,
      `  current:   ${current?.urn}  fingerprint ${current?.fingerprint}`,
      `  previous:  ${previous ? `${previous.urn}  fingerprint ${previous.fingerprint}` : '(none kept)'}`,
      `  cluster:   ${data.clusterId ?? '(no orch_cluster_id)'}`,
      `  verified:  ${options.verify ? describeVerify(verify) : 'not checked (add --verify)'}`,
    ],
  };
}
