import type { KindInfo, KindRegistry } from './kinds.js';
import type { Registry } from './registry.js';
import { nowTimestamp } from './registry.js';
import { API_AUDIENCES, type BoundObject, type ServiceAccountTokens } from './service-account-tokens.js';
import { badRequest, conflict, FieldError, invalid } from './status-errors.js';
import type { KubeObject } from './types.js';

// POST .../serviceaccounts/{name}/token, in the order the apiserver's TokenREST.Create checks
// things: body name/namespace against the URL, the ServiceAccount (404), audiences defaulted,
// expirationSeconds validated (422), the bound object, then the token.

const TOKEN_REQUEST = { group: 'authentication.k8s.io', kind: 'TokenRequest' };
const API_VERSION = 'authentication.k8s.io/v1';
/** SetDefaults_TokenRequestSpec. */
const DEFAULT_EXPIRATION_SECONDS = 3600;
/** ValidateTokenRequest: at least 10 minutes, at most 2^32 seconds. */
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function decode(body: unknown): { metadata: Obj; spec: Obj } {
  if (!isObject(body)) throw badRequest('the object provided is unrecognized (must be of type TokenRequest)');
  if (body['apiVersion'] !== undefined && body['apiVersion'] !== API_VERSION) {
    throw badRequest(
      `the API version in the data (${String(body['apiVersion'])}) does not match the expected API version (${API_VERSION})`,
    );
  }
  if (body['kind'] !== undefined && body['kind'] !== 'TokenRequest') {
    throw badRequest(
      `TokenRequest in version "v1" cannot be handled as a TokenRequest: the kind in the data (${String(body['kind'])}) does not match the expected kind`,
    );
  }
  const metadata = isObject(body['metadata']) ? structuredClone(body['metadata']) : {};
  const spec = isObject(body['spec']) ? structuredClone(body['spec']) : {};
  const seconds = spec['expirationSeconds'];
  if (seconds === undefined || seconds === null) spec['expirationSeconds'] = DEFAULT_EXPIRATION_SECONDS;
  else if (typeof seconds !== 'number' || !Number.isInteger(seconds)) {
    throw badRequest(
      `TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal ${typeof seconds} into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64`,
    );
  }
  if (
    spec['audiences'] !== undefined &&
    spec['audiences'] !== null &&
    !(Array.isArray(spec['audiences']) && spec['audiences'].every((a) => typeof a === 'string'))
  ) {
    throw badRequest(
      'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal into Go struct field TokenRequestSpec.spec.audiences of type []string',
    );
  }
  return { metadata, spec };
}

/** spec.boundObjectRef: a Pod (running as this ServiceAccount), a Secret or a Node that exists, with the given uid if one is named. */
function resolveBound(registry: Registry, kinds: KindRegistry, ref: Obj, namespace: string, saName: string): BoundObject {
  const apiVersion = String(ref['apiVersion'] ?? '');
  const kind = String(ref['kind'] ?? '');
  const name = String(ref['name'] ?? '');
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
  const info = group === '' && ['Pod', 'Secret', 'Node'].includes(kind) ? kinds.byApiVersionKind(apiVersion, kind) : undefined;
  if (!info) {
    const version = apiVersion.includes('/') ? apiVersion.split('/')[1]! : apiVersion;
    throw badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`);
  }
  const obj = registry.get(info, info.namespaced ? namespace : undefined, name);
  if (kind === 'Pod' && (obj['spec'] as Obj | undefined)?.['serviceAccountName'] !== saName) {
    throw badRequest(`cannot bind token for serviceaccount "${saName}" to pod running with different serviceaccount name.`);
  }
  const uid = ref['uid'];
  if (uid && uid !== obj.metadata.uid) {
    throw conflict(
      { group: '', plural: kind },
      name,
      `the UID in the bound object reference (${String(uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  return { apiVersion, kind, name, uid: obj.metadata.uid! };
}

interface TokenRequestContext {
  registry: Registry;
  kinds: KindRegistry;
  tokens: ServiceAccountTokens;
}

/** Answers a TokenRequest for ServiceAccount `name` in `namespace` (the 201 body), or throws the apiserver's error. */
export function createTokenRequest(ctx: TokenRequestContext, saInfo: KindInfo, namespace: string, name: string, body: unknown): KubeObject {
  const { metadata, spec } = decode(body);
  if (metadata['name'] && metadata['name'] !== name) {
    throw invalid(TOKEN_REQUEST, name, [
      new FieldError('FieldValueInvalid', 'metadata.name', 'must match the service account name if specified', metadata['name']),
    ]);
  }
  if (metadata['namespace'] && metadata['namespace'] !== namespace) {
    throw invalid(TOKEN_REQUEST, name, [
      new FieldError(
        'FieldValueInvalid',
        'metadata.namespace',
        'must match the service account namespace if specified',
        metadata['namespace'],
      ),
    ]);
  }
  const sa = ctx.registry.get(saInfo, namespace, name);
  const audiences = Array.isArray(spec['audiences']) && spec['audiences'].length > 0 ? (spec['audiences'] as string[]) : [...API_AUDIENCES];
  const now = Date.now();
  const seconds = spec['expirationSeconds'] as number;
  const errs: FieldError[] = [];
  if (seconds < MIN_EXPIRATION_SECONDS)
    errs.push(new FieldError('FieldValueInvalid', 'spec.expirationSeconds', 'may not specify a duration less than 10 minutes', seconds));
  if (seconds > MAX_EXPIRATION_SECONDS)
    errs.push(
      new FieldError('FieldValueInvalid', 'spec.expirationSeconds', 'may not specify a duration larger than 2^32 seconds', seconds),
    );
  // TokenREST names no object in this error: the message reads `TokenRequest.authentication.k8s.io "" is invalid`.
  if (errs.length > 0) throw invalid(TOKEN_REQUEST, '', errs);
  const ref = spec['boundObjectRef'];
  const bound = isObject(ref) ? resolveBound(ctx.registry, ctx.kinds, ref, namespace, name) : undefined;
  const expiresAtMs = now + seconds * 1000;
  const token = ctx.tokens.issue(sa, audiences, expiresAtMs, bound);
  return {
    kind: 'TokenRequest',
    apiVersion: API_VERSION,
    metadata: { ...metadata, name, namespace, creationTimestamp: nowTimestamp() },
    spec: { audiences, expirationSeconds: seconds, boundObjectRef: bound ? ref : null },
    status: { token, expirationTimestamp: new Date(expiresAtMs).toISOString().replace(/\.\d{3}Z$/, 'Z') },
  };
}
