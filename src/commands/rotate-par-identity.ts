import { hostname as osHostname } from 'node:os';
import { requireRunnerEnabled } from '../config/index.js';
import { retryPolicyFromEnv } from '../enrollment/index.js';
import { ConfigError, ConflictError, KubernetesError, type ParError, StorageError, VerificationError } from '../errors.js';
import { failpoint } from '../failpoint.js';
import { encodePrivateJwk, } from '../identity/index.js';
import type { Io } from '../io.js';
import {
  buildIdentitySecret,
  HELM_SECRET_NAME,
  type IdentitySecretState,
  kubeFailure,
  readIdentitySecret,
  resolveClusterId,
  SECRET_KEYS,
  secretExists,
  writeIdentitySecret,
} from '../kube/index.js';
import { type CommandResult, createReporter, type OutputOptions, type Reporter } from '../output.js';
import { type ClusterTarget, type ClusterTargetOptions, resolveClusterTarget } from './cluster-target.js';
import { type CredentialFlags, enrollNewKey, healthCheckInput, resolveEnrollmentContext } from './enrollment-context.js';
import { describeVerify, type VerifyReport, verifyStep } from './verify-step.js';

export interface RotateParIdentityOptions extends OutputOptions, CredentialFlags, ClusterTargetOptions {
  timeoutSeconds: number;
  dryRun: boolean;
  verify: boolean;
  keepPrevious: boolean;
}

function requireSecretStorage(cluster: ClusterTarget): void {
  requireRunnerEnabled(cluster.config);
  if (!cluster.config.getBool('private_action_runner.identity_use_k8s_secret')) {
    throw new ConfigError(
      'SECRET_STORAGE_DISABLED',
      'private_action_runner.identity_use_k8s_secret is false: this cluster agent does not keep its identity in a Secret',
      'Nothing was changed. Enable identity_use_k8s_secret, or rotate each runner with `par-identity rotate-identity`.',
    );
  }
}

async function readCurrent(cluster: ClusterTarget, report: Reporter): Promise<IdentitySecretState> {
  const current = await readIdentitySecret(cluster.core, cluster.ref);
  if (current.state === 'missing') {
    if (cluster.target.name !== HELM_SECRET_NAME && (await secretExists(cluster.core, { ...cluster.ref, name: HELM_SECRET_NAME }))) {
      throw new KubernetesError(
        'SECRET_NAME_MISMATCH',
        `Secret ${cluster.ref.namespace}/${cluster.ref.name} does not exist, but ${cluster.ref.namespace}/${HELM_SECRET_NAME} (the Helm/Operator name) does`,
        `Nothing was changed. Pass --secret-name ${HELM_SECRET_NAME} (or set private_action_runner.identity_secret_name) so the agent and this tool use the same Secret.`,
      );
    }
    report.info('the Secret does not exist yet: it will be created');
    return current;
  }
  if (current.identity) report.info(`current: ${current.identity.record.urn} (fingerprint ${current.identity.key.kid}, resourceVersion ${current.resourceVersion})`);
  else report.warn(`the Secret's current identity does not decode (${current.error?.message}); it is not kept as previous_*`);
  return current;
}

/** Runner-name prefix: cluster_name, else the hostname (protocol §3), with a warning. */
function runnerPrefix(cluster: ClusterTarget, io: Io, report: Reporter): string {
  const name = cluster.config.getString('cluster_name');
  if (name) return name;
  const host = cluster.config.getString('hostname') ?? io.env.HOSTNAME ?? osHostname();
  report.warn(`cluster_name is not set; the runner is named after the hostname ${host}`);
  return host;
}

function orphanedRunner(err: ParError, urn: string): ParError {
  const hint = `${err.hint} The new runner ${urn} was enrolled but is not stored anywhere: remove it in Datadog.`;
  if (err instanceof ConflictError) {
    return new ConflictError(`${err.message} — someone else changed the Secret between our read and our write; it was not overwritten`, hint, { ...err.details, orphanedUrn: urn });
  }
  return new KubernetesError(err.code, err.message, hint, { ...err.details, orphanedUrn: urn });
}

export async function run(options: RotateParIdentityOptions, io: Io): Promise<CommandResult> {
  const started = io.now().getTime();
  const report = createReporter(io, options);
  report.step('resolve config and cluster');
  const cluster = await resolveClusterTarget(options, io, report);
  requireSecretStorage(cluster);
  const { core, ref } = cluster;

  report.step('read the identity Secret');
  const current = await readCurrent(cluster, report);
  const create = current.state === 'missing';
  const existing = current.state === 'present' ? current.secret : undefined;

  report.step('pre-flight');
  const clusterId = await resolveClusterId(core, ref.namespace, { dryRun: options.dryRun });
  report.info(`cluster id: ${clusterId.id} (${clusterId.source})`);
  const prefix = runnerPrefix(cluster, io, report);
  const ctx = await resolveEnrollmentContext(cluster.config, options, io, report);
  // The same write we will make, checked by the apiserver (RBAC, admission) before Datadog sees anything.
  try {
    await writeIdentitySecret(core, ref, buildIdentitySecret(ref, existing, current.state === 'present' ? current.data : {}), { create, dryRun: true });
  } catch (err) {
    throw kubeFailure(err, `server-side dry run of the ${create ? 'create' : 'update'} of Secret ${ref.namespace}/${ref.name}`, 'Nothing was enrolled and nothing was changed.');
  }
  report.info(`server-side dry run of the ${create ? 'create' : 'update'}: allowed`);
  failpoint('after-secret-read');

  const previousUrn = current.state === 'present' ? (current.identity?.record.urn ?? null) : null;
  if (options.dryRun) {
    report.step('dry run: no key generated, nothing enrolled, nothing written');
    return {
      command: 'rotate-par-identity',
      data: { dryRun: true, namespace: ref.namespace, secretName: ref.name, action: create ? 'create' : 'update', previousUrn, enrollmentUrl: ctx.endpoint.baseUrl, clusterId: clusterId.id, durationMs: io.now().getTime() - started },
      summary: [`dry run passed: rotate-par-identity would enroll at ${ctx.endpoint.baseUrl} and ${create ? 'create' : 'update'} Secret ${ref.namespace}/${ref.name}`],
    };
  }

  const { key, urn } = await enrollNewKey(ctx, 'cluster_agent', { runnerNamePrefix: prefix, clusterId: clusterId.id }, options.timeoutSeconds, io, report);

  report.step(`${create ? 'create' : 'update'} the Secret (guarded by resourceVersion ${current.state === 'present' ? current.resourceVersion : '-'})`);
  const values: Record<string, string> = {
    [SECRET_KEYS.privateKey]: encodePrivateJwk(key),
    [SECRET_KEYS.urn]: urn,
    [SECRET_KEYS.clusterId]: clusterId.id,
    [SECRET_KEYS.apiKeyHash]: ctx.apiKeyHash,
  };
  if (options.keepPrevious && current.state === 'present' && current.identity) {
    values[SECRET_KEYS.previousPrivateKey] = current.identity.record.privateKey;
    values[SECRET_KEYS.previousUrn] = current.identity.record.urn;
  }
  let written: import('@kubernetes/client-node').V1Secret;
  try {
    written = await writeIdentitySecret(core, ref, buildIdentitySecret(ref, existing, values), { create, dryRun: false });
  } catch (err) {
    throw orphanedRunner(kubeFailure(err, `${create ? 'creating' : 'updating'} Secret ${ref.namespace}/${ref.name}`, 'The Secret was not changed.'), urn);
  }

  report.step('read back and decode');
  const readBack = await readIdentitySecret(core, ref);
  if (readBack.state !== 'present' || !readBack.identity || readBack.identity.record.urn !== urn || readBack.identity.key.kid !== key.kid) {
    throw new StorageError('READ_BACK_MISMATCH', `Secret ${ref.namespace}/${ref.name} does not read back as written (someone changed it after our write?)`, `Inspect it with \`par-identity status --secret -n ${ref.namespace}\`.`, { urn });
  }

  let verify: VerifyReport = { performed: false };
  if (options.verify) {
    report.step('verify online (signed health check)');
    verify = await verifyStep(healthCheckInput(ctx, readBack.identity, 'cluster_agent', io), Math.max(10, options.timeoutSeconds - (io.now().getTime() - started) / 1000), retryPolicyFromEnv(io.env));
  }
  const rollbackCommand = `par-identity rollback --secret -n ${ref.namespace} --secret-name ${ref.name}`;
  if (verify.performed && !verify.ok) {
    throw new VerificationError(
      `the new identity ${urn} was stored in Secret ${ref.namespace}/${ref.name} but the server did not accept it: ${verify.reason}`,
      `${values[SECRET_KEYS.previousUrn] ? `The previous identity is kept in the Secret; restore it with: ${rollbackCommand}` : 'No previous identity was kept.'}`,
      { urn, namespace: ref.namespace, secretName: ref.name },
    );
  }
  const restart = `kubectl -n ${ref.namespace} rollout restart deployment/datadog-cluster-agent`;
  const resourceVersion = written.metadata?.resourceVersion ?? readBack.resourceVersion;
  return {
    command: 'rotate-par-identity',
    data: {
      urn,
      previousUrn,
      fingerprint: key.kid,
      namespace: ref.namespace,
      secretName: ref.name,
      resourceVersion,
      action: create ? 'created' : 'updated',
      previousKept: Boolean(values[SECRET_KEYS.previousUrn]),
      clusterId: clusterId.id,
      restartHint: restart,
      verify,
      durationMs: io.now().getTime() - started,
    },
    summary: [
      `rotated: ${urn}`,
      `  fingerprint:  ${key.kid}`,
      `  previous:     ${previousUrn ?? '(none)'}${values[SECRET_KEYS.previousUrn] ? ' (kept in the Secret as previous_urn / previous_private_key)' : ''}`,
      `  secret:       ${ref.namespace}/${ref.name} ${create ? 'created' : 'updated'} (resourceVersion ${resourceVersion})`,
      `  verified:     ${describeVerify(verify)}`,
      `next: replicas running \`par-identity watch\` reload it within seconds; others need a restart: ${restart}`,
      'note: The previous runner stays registered in Datadog (and keeps working) until you remove it there.',
      `undo: ${rollbackCommand}`,
    ],
  };
}
