import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { IdentityDecodeError, type ParError } from '../errors.js';
import { type DecodedIdentity, decodeIdentity } from '../identity/index.js';
import { quotedServerValue } from '../sanitize.js';
import { isNotFound, KubeBadResponse, kubeFailure } from './kube-errors.js';

// The cluster agent's identity Secret (docs/protocol.md §6): data keys the Go reader needs, the labels it
// sets, and the previous identity kept beside them (the Go reader ignores extra keys).

export const SECRET_KEYS = {
  privateKey: 'private_key',
  urn: 'urn',
  clusterId: 'orch_cluster_id',
  apiKeyHash: 'api_key_hash',
  previousPrivateKey: 'previous_private_key',
  previousUrn: 'previous_urn',
} as const;

/** Where each part of an identity lives in a Secret's data. */
export interface SecretLayout {
  privateKey: string;
  urn: string;
  previousPrivateKey: string;
  previousUrn: string;
  /** Labels merged on write (the cluster agent's; none for the Helm runner Secret). */
  labels: Record<string, string>;
  /** Keep data keys we do not own (the Helm Secret may hold other env vars); the agent's Secret is replaced wholesale, as upstream does. */
  keepOtherKeys: boolean;
}

/** The standalone runner installed with the Helm chart (docs/protocol.md §6b): read through env vars. */
const HELM_RUNNER_KEYS = {
  privateKey: 'RUNNER_PRIVATE_KEY',
  urn: 'RUNNER_URN',
  previousPrivateKey: 'PREVIOUS_RUNNER_PRIVATE_KEY',
  previousUrn: 'PREVIOUS_RUNNER_URN',
} as const;

const SECRET_LABELS: Record<string, string> = {
  'app.kubernetes.io/name': 'datadog-cluster-agent',
  'app.kubernetes.io/component': 'private-action-runner',
  'app.kubernetes.io/managed-by': 'datadog-cluster-agent',
};

export const CLUSTER_AGENT_LAYOUT: SecretLayout = { ...SECRET_KEYS, labels: SECRET_LABELS, keepOtherKeys: false };
export const HELM_RUNNER_LAYOUT: SecretLayout = { ...HELM_RUNNER_KEYS, labels: {}, keepOtherKeys: true };

export interface SecretRef {
  namespace: string;
  name: string;
}

export type IdentitySecretState =
  | { state: 'missing'; ref: SecretRef }
  | {
      state: 'present';
      ref: SecretRef;
      secret: V1Secret;
      resourceVersion: string;
      /** Decoded data values (raw strings, as the Go reader sees them). */
      data: Record<string, string>;
      identity?: DecodedIdentity;
      previous?: DecodedIdentity;
      error?: ParError;
    };

/** The data values, base64-decoded; data that is not a map of strings is a bad answer (KUBE_BAD_RESPONSE), not a network error. */
function decodeData(secret: V1Secret): Record<string, string> {
  const data: unknown = secret.data ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new KubeBadResponse(`the Secret's data is not a map (${Array.isArray(data) ? 'array' : typeof data})`);
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => {
      if (typeof v !== 'string')
        throw new KubeBadResponse(`the Secret's data value ${quotedServerValue(k)} is not a string (${v === null ? 'null' : typeof v})`);
      return [k, Buffer.from(v, 'base64').toString('utf8')];
    }),
  );
}

function tryDecode(privateKey: string | undefined, urn: string | undefined): { identity?: DecodedIdentity; error?: ParError } {
  if (!privateKey) return { error: new IdentityDecodeError('private_key', 'is missing from the Secret') };
  if (!urn) return { error: new IdentityDecodeError('urn', 'is missing from the Secret') };
  try {
    return { identity: decodeIdentity({ privateKey, urn }) };
  } catch (err) {
    return { error: err as ParError };
  }
}

export function describeSecret(ref: SecretRef, secret: V1Secret, layout: SecretLayout = CLUSTER_AGENT_LAYOUT): IdentitySecretState {
  const data = decodeData(secret);
  const current = tryDecode(data[layout.privateKey], data[layout.urn]);
  const previous = data[layout.previousPrivateKey] ? tryDecode(data[layout.previousPrivateKey], data[layout.previousUrn]) : {};
  return {
    state: 'present',
    ref,
    secret,
    resourceVersion: secret.metadata?.resourceVersion ?? '',
    data,
    ...(current.identity ? { identity: current.identity } : {}),
    ...(current.error ? { error: current.error } : {}),
    ...(previous.identity ? { previous: previous.identity } : {}),
  };
}

export async function readIdentitySecret(
  core: CoreV1Api,
  ref: SecretRef,
  layout: SecretLayout = CLUSTER_AGENT_LAYOUT,
): Promise<IdentitySecretState> {
  try {
    return describeSecret(ref, await core.readNamespacedSecret(ref), layout);
  } catch (err) {
    if (isNotFound(err)) return { state: 'missing', ref };
    throw kubeFailure(err, `reading Secret ${ref.namespace}/${ref.name}`, 'Nothing was changed.');
  }
}

export async function secretExists(core: CoreV1Api, ref: SecretRef): Promise<boolean> {
  return (await readIdentitySecret(core, ref).catch(() => ({ state: 'missing' }))).state === 'present';
}

/** The Secret as it should be after the write: data replaced wholesale (as upstream), labels merged. */
export function buildIdentitySecret(
  ref: SecretRef,
  existing: V1Secret | undefined,
  values: Record<string, string>,
  layout: SecretLayout = CLUSTER_AGENT_LAYOUT,
): V1Secret {
  const encoded = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));
  const data = layout.keepOtherKeys ? { ...(existing?.data ?? {}), ...encoded } : encoded;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: existing?.type ?? 'Opaque',
    metadata: {
      ...(existing?.metadata ?? {}),
      name: ref.name,
      namespace: ref.namespace,
      labels: { ...(existing?.metadata?.labels ?? {}), ...layout.labels },
    },
    data,
  };
}

/**
 * Create, or update guarded by the resourceVersion we read: a concurrent writer makes the apiserver
 * answer 409 and nothing is overwritten. `dryRun` asks the apiserver to run every check (RBAC,
 * admission, validation) without storing anything.
 */
export async function writeIdentitySecret(
  core: CoreV1Api,
  ref: SecretRef,
  secret: V1Secret,
  options: { create: boolean; dryRun: boolean },
): Promise<V1Secret> {
  const dryRun = options.dryRun ? { dryRun: 'All' } : {};
  return options.create
    ? core.createNamespacedSecret({ namespace: ref.namespace, body: secret, ...dryRun })
    : core.replaceNamespacedSecret({ ...ref, body: secret, ...dryRun });
}
