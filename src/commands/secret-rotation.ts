import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import type { AgentFlavor } from '../enrollment/index.js';
import { ConflictError, KubernetesError, type ParError, StorageError } from '../errors.js';
import { failpoint } from '../failpoint.js';
import { type DecodedIdentity, encodePrivateJwk, type PrivateIdentityKey } from '../identity/index.js';
import type { Io } from '../io.js';
import { buildIdentitySecret, type IdentitySecretState, kubeFailure, readIdentitySecret, type SecretLayout, type SecretRef, writeIdentitySecret } from '../kube/index.js';
import type { Reporter } from '../output.js';
import { type EnrollmentContext, enrollNewKey } from './enrollment-context.js';

// The steps every Secret-held identity rotation shares (cluster agent Secret, Helm runner Secret):
// server-side dry run of the very write → enroll → resourceVersion-guarded write → read back.

export interface SecretRotationPlan {
  core: CoreV1Api;
  ref: SecretRef;
  layout: SecretLayout;
  current: IdentitySecretState;
  ctx: EnrollmentContext;
  flavor: AgentFlavor;
  naming: { runnerNamePrefix: string; hostname?: string; clusterId?: string };
  /** Data keys written besides the identity (orch_cluster_id, api_key_hash, ...). */
  extraValues: Record<string, string>;
  keepPrevious: boolean;
  timeoutSeconds: number;
}

export interface SecretRotationResult {
  key: PrivateIdentityKey;
  urn: string;
  identity: DecodedIdentity;
  created: boolean;
  previousKept: boolean;
  resourceVersion: string;
}

export function previousUrnOf(current: IdentitySecretState): string | null {
  return current.state === 'present' ? (current.identity?.record.urn ?? null) : null;
}

/** The apiserver checks RBAC and admission for the exact write, before a runner exists in Datadog. */
export async function dryRunSecretWrite(plan: Pick<SecretRotationPlan, 'core' | 'ref' | 'layout' | 'current'>, report: Reporter): Promise<void> {
  const { core, ref, current } = plan;
  const create = current.state === 'missing';
  const existing = current.state === 'present' ? current.secret : undefined;
  try {
    await writeIdentitySecret(core, ref, buildIdentitySecret(ref, existing, current.state === 'present' ? current.data : {}, plan.layout), { create, dryRun: true });
  } catch (err) {
    throw kubeFailure(err, `server-side dry run of the ${create ? 'create' : 'update'} of Secret ${ref.namespace}/${ref.name}`, 'Nothing was enrolled and nothing was changed.');
  }
  report.info(`server-side dry run of the ${create ? 'create' : 'update'}: allowed`);
  failpoint('after-secret-read');
}

function orphanedRunner(err: ParError, urn: string): ParError {
  const hint = `${err.hint} The new runner ${urn} was enrolled but is not stored anywhere: remove it in Datadog.`;
  if (err instanceof ConflictError) {
    return new ConflictError(`${err.message} — someone else changed the Secret between our read and our write; it was not overwritten`, hint, { ...err.details, orphanedUrn: urn });
  }
  return new KubernetesError(err.code, err.message, hint, { ...err.details, orphanedUrn: urn });
}

export async function rotateSecretIdentity(plan: SecretRotationPlan, io: Io, report: Reporter): Promise<SecretRotationResult> {
  const { core, ref, layout, current } = plan;
  const created = current.state === 'missing';
  const { key, urn } = await enrollNewKey(plan.ctx, plan.flavor, plan.naming, plan.timeoutSeconds, io, report);

  report.step(`${created ? 'create' : 'update'} the Secret (guarded by resourceVersion ${current.state === 'present' ? current.resourceVersion : '-'})`);
  const values: Record<string, string> = { [layout.privateKey]: encodePrivateJwk(key), [layout.urn]: urn, ...plan.extraValues };
  const previousKept = plan.keepPrevious && current.state === 'present' && Boolean(current.identity);
  if (previousKept && current.state === 'present' && current.identity) {
    values[layout.previousPrivateKey] = current.identity.record.privateKey;
    values[layout.previousUrn] = current.identity.record.urn;
  }
  let written: V1Secret;
  try {
    written = await writeIdentitySecret(core, ref, buildIdentitySecret(ref, current.state === 'present' ? current.secret : undefined, values, layout), { create: created, dryRun: false });
  } catch (err) {
    throw orphanedRunner(kubeFailure(err, `${created ? 'creating' : 'updating'} Secret ${ref.namespace}/${ref.name}`, 'The Secret was not changed.'), urn);
  }

  report.step('read back and decode');
  const readBack = await readIdentitySecret(core, ref, layout);
  if (readBack.state !== 'present' || !readBack.identity || readBack.identity.record.urn !== urn || readBack.identity.key.kid !== key.kid) {
    throw new StorageError('READ_BACK_MISMATCH', `Secret ${ref.namespace}/${ref.name} does not read back as written (someone changed it after our write?)`, `Inspect it with \`kubectl -n ${ref.namespace} get secret ${ref.name}\`.`, { urn });
  }
  return { key, urn, identity: readBack.identity, created, previousKept, resourceVersion: written.metadata?.resourceVersion ?? readBack.resourceVersion };
}
