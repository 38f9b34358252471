import { loadAgentConfig, resolveHostname } from '../config/index.js';
import { KubernetesError, VerificationError } from '../errors.js';
import type { Io } from '../io.js';
import { connectKube, coreApi, HELM_RUNNER_LAYOUT, readIdentitySecret, serviceAccountNamespace } from '../kube/index.js';
import { type CommandResult, createReporter, type OutputOptions } from '../output.js';
import { resolveEnrollmentContext, type CredentialFlags } from './enrollment-context.js';
import { rolloutAfterRotation, type RolloutFlags } from './rollout-after-rotation.js';
import { dryRunSecretWrite, previousUrnOf, rotateSecretIdentity } from './secret-rotation.js';
import { describeVerify, verifyAfterRotation } from './verify-step.js';

// `rotate-identity --k8s-secret NAME`: the standalone runner installed with the Helm chart keeps its
// identity in a Secret it reads as environment variables (protocol §6b), rotated from outside the Pod.

export interface RotateHelmSecretOptions extends OutputOptions, CredentialFlags, RolloutFlags {
  cfgPath: string;
  extraCfg: string[];
  secretName: string;
  namespace?: string;
  kubeconfig?: string;
  context?: string;
  timeoutSeconds: number;
  dryRun: boolean;
  verify: boolean;
  keepPrevious: boolean;
}

export async function run(options: RotateHelmSecretOptions, io: Io): Promise<CommandResult> {
  const started = io.now().getTime();
  const report = createReporter(io, options);
  report.step('resolve config and cluster');
  const config = await loadAgentConfig({ cfgPath: options.cfgPath, extraFiles: options.extraCfg, env: io.env });
  const conn = await connectKube({ ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}), ...(options.context ? { context: options.context } : {}), env: io.env });
  for (const warning of conn.warnings) report.warn(warning);
  const core = await coreApi(conn);
  const ref = { namespace: options.namespace ?? serviceAccountNamespace(io.env) ?? 'default', name: options.secretName };
  report.info(`kubernetes: ${conn.server} (${conn.source}); secret ${ref.namespace}/${ref.name} (keys RUNNER_URN, RUNNER_PRIVATE_KEY)`);

  report.step('read the runner Secret');
  const current = await readIdentitySecret(core, ref, HELM_RUNNER_LAYOUT);
  if (current.state === 'missing') {
    throw new KubernetesError('SECRET_MISSING', `Secret ${ref.namespace}/${ref.name} does not exist`, 'Nothing was changed. Pass the name set as runner.runnerIdentitySecret in the Helm values, and -n for its namespace.');
  }
  if (current.identity) report.info(`current: ${current.identity.record.urn} (fingerprint ${current.identity.key.kid}, resourceVersion ${current.resourceVersion})`);
  else report.warn(`the Secret's current identity does not decode (${current.error?.message}); it is not kept as PREVIOUS_*`);
  if (current.data.RUNNER_URN === undefined) report.warn('the Secret has no RUNNER_URN: the chart takes the URN from its values, which must be updated to the new URN as well');

  report.step('pre-flight');
  await dryRunSecretWrite({ core, ref, layout: HELM_RUNNER_LAYOUT, current }, report);
  const ctx = await resolveEnrollmentContext(config, options, io, report);
  const prefix = options.rollout?.split('/')[1] ?? resolveHostname(config).hostname;
  const previousUrn = previousUrnOf(current);
  if (options.dryRun) {
    return {
      command: 'rotate-identity',
      data: { dryRun: true, namespace: ref.namespace, secretName: ref.name, previousUrn, enrollmentUrl: ctx.endpoint.baseUrl, durationMs: io.now().getTime() - started },
      summary: [`dry run passed: rotate-identity would enroll at ${ctx.endpoint.baseUrl} and update Secret ${ref.namespace}/${ref.name}`],
    };
  }
  const rotated = await rotateSecretIdentity(
    {
      core,
      ref,
      layout: HELM_RUNNER_LAYOUT,
      current,
      ctx,
      flavor: 'private_action_runner',
      naming: { runnerNamePrefix: prefix, hostname: prefix },
      extraValues: {},
      keepPrevious: options.keepPrevious,
      timeoutSeconds: options.timeoutSeconds,
    },
    io,
    report,
  );
  const verify = await verifyAfterRotation(ctx, rotated.identity, 'private_action_runner', options, started, io, report);
  if (verify.performed && !verify.ok) {
    throw new VerificationError(`the new identity ${rotated.urn} was stored in Secret ${ref.namespace}/${ref.name} but the server did not accept it: ${verify.reason}`, 'Do not roll the Deployment out; the previous identity is kept as PREVIOUS_RUNNER_* in the Secret.', { urn: rotated.urn });
  }
  const rollout = await rolloutAfterRotation(options, rotated.key.kid, ref.namespace, io, report);
  return {
    command: 'rotate-identity',
    data: { urn: rotated.urn, previousUrn, fingerprint: rotated.key.kid, namespace: ref.namespace, secretName: ref.name, resourceVersion: rotated.resourceVersion, previousKept: rotated.previousKept, verify, rollout: rollout.data, durationMs: io.now().getTime() - started },
    summary: [
      `rotated: ${rotated.urn}`,
      `  fingerprint:  ${rotated.key.kid}`,
      `  previous:     ${previousUrn ?? '(none)'}${rotated.previousKept ? ' (kept as PREVIOUS_RUNNER_URN / PREVIOUS_RUNNER_PRIVATE_KEY)' : ''}`,
      `  secret:       ${ref.namespace}/${ref.name} updated (resourceVersion ${rotated.resourceVersion})`,
      `  verified:     ${describeVerify(verify)}`,
      ...rollout.summary,
    ],
  };
}
