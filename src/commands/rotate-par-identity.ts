import { hostname as osHostname } from 'node:os';
import { requireRunnerEnabled } from '../config/index.js';
import { ConfigError, KubernetesError, VerificationError } from '../errors.js';
import type { Io } from '../io.js';
import {
  CLUSTER_AGENT_LAYOUT,
  HELM_SECRET_NAME,
  type IdentitySecretState,
  readIdentitySecret,
  resolveClusterId,
  SECRET_KEYS,
  secretExists,
} from '../kube/index.js';
import { type CommandResult, createReporter, type OutputOptions, type Reporter } from '../output.js';
import { type ClusterTarget, type ClusterTargetOptions, resolveClusterTarget } from './cluster-target.js';
import { type CredentialFlags, resolveEnrollmentContext } from './enrollment-context.js';
import { type RolloutFlags, rolloutAfterRotation } from './rollout-after-rotation.js';
import { dryRunSecretWrite, previousUrnOf, rotateSecretIdentity } from './secret-rotation.js';
import { describeVerify, verifyAfterRotation } from './verify-step.js';

export interface RotateParIdentityOptions extends OutputOptions, CredentialFlags, ClusterTargetOptions, RolloutFlags {
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

export async function run(options: RotateParIdentityOptions, io: Io): Promise<CommandResult> {
  const started = io.now().getTime();
  const report = createReporter(io, options);
  report.step('resolve config and cluster');
  const cluster = await resolveClusterTarget(options, io, report);
  requireSecretStorage(cluster);
  const { core, ref } = cluster;

  report.step('read the identity Secret');
  const current = await readCurrent(cluster, report);
  const willCreate = current.state === 'missing';

  report.step('pre-flight');
  const clusterId = await resolveClusterId(core, cluster.conn.agentNamespace, { dryRun: options.dryRun });
  report.info(`cluster id: ${clusterId.id} (${clusterId.source})`);
  const prefix = runnerPrefix(cluster, io, report);
  const ctx = await resolveEnrollmentContext(cluster.config, options, io, report);
  await dryRunSecretWrite({ core, ref, layout: CLUSTER_AGENT_LAYOUT, current }, report);

  const previousUrn = previousUrnOf(current);
  if (options.dryRun) {
    report.step('dry run: no key generated, nothing enrolled, nothing written');
    return {
      command: 'rotate-par-identity',
      data: { dryRun: true, namespace: ref.namespace, secretName: ref.name, action: willCreate ? 'create' : 'update', previousUrn, enrollmentUrl: ctx.endpoint.baseUrl, clusterId: clusterId.id, durationMs: io.now().getTime() - started },
      summary: [`dry run passed: rotate-par-identity would enroll at ${ctx.endpoint.baseUrl} and ${willCreate ? 'create' : 'update'} Secret ${ref.namespace}/${ref.name}`],
    };
  }

  const rotated = await rotateSecretIdentity(
    {
      core,
      ref,
      layout: CLUSTER_AGENT_LAYOUT,
      current,
      ctx,
      flavor: 'cluster_agent',
      naming: { runnerNamePrefix: prefix, clusterId: clusterId.id },
      extraValues: { [SECRET_KEYS.clusterId]: clusterId.id, [SECRET_KEYS.apiKeyHash]: ctx.apiKeyHash },
      keepPrevious: options.keepPrevious,
      timeoutSeconds: options.timeoutSeconds,
    },
    io,
    report,
  );
  const { key, urn } = rotated;

  const verify = await verifyAfterRotation(ctx, rotated.identity, 'cluster_agent', options, started, io, report);
  const rollbackCommand = `par-identity rollback --secret -n ${ref.namespace} --secret-name ${ref.name}`;
  if (verify.performed && !verify.ok) {
    throw new VerificationError(
      `the new identity ${urn} was stored in Secret ${ref.namespace}/${ref.name} but the server did not accept it: ${verify.reason}`,
      `${rotated.previousKept ? `The previous identity is kept in the Secret; restore it with: ${rollbackCommand}` : 'No previous identity was kept.'}`,
      { urn, namespace: ref.namespace, secretName: ref.name },
    );
  }
  const restart = `kubectl -n ${ref.namespace} rollout restart deployment/datadog-cluster-agent`;
  const rollout = await rolloutAfterRotation(options, key.kid, ref.namespace, io, report);
  const { resourceVersion } = rotated;
  const create = rotated.created;
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
      previousKept: rotated.previousKept,
      clusterId: clusterId.id,
      restartHint: restart,
      verify,
      rollout: rollout.data,
      durationMs: io.now().getTime() - started,
    },
    summary: [
      `rotated: ${urn}`,
      `  fingerprint:  ${key.kid}`,
      `  previous:     ${previousUrn ?? '(none)'}${rotated.previousKept ? ' (kept in the Secret as previous_urn / previous_private_key)' : ''}`,
      `  secret:       ${ref.namespace}/${ref.name} ${create ? 'created' : 'updated'} (resourceVersion ${resourceVersion})`,
      `  verified:     ${describeVerify(verify)}`,
      `next: replicas running \`par-identity watch\` reload it within seconds; others need a restart: ${restart}`,
      ...rollout.summary,
      `undo: ${rollbackCommand}`,
    ],
  };
}
