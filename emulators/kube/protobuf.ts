import { decodeMessage } from './protobuf-messages.js';
import { PROTOBUF_ROOTS } from './protobuf-schema.js';
import { bytes, type Field, fields, int, str } from './protobuf-wire.js';
import { badRequest, failure } from './status-errors.js';

/**
 * Decoder for the Kubernetes protobuf envelope, limited to the kinds kubectl's typed commands
 * send that way (`kubectl create secret|configmap|namespace|serviceaccount|token|job|role...`).
 * Field numbers follow the generated.proto files of k8s.io/api core/v1 and apimachinery meta/v1;
 * the kinds in protobuf-schema.ts go through its generic decoder.
 */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

function mapEntry(f: Field, valueAs: 'string' | 'base64'): [string, string] {
  let k = '';
  let v = '';
  for (const e of fields(bytes(f))) {
    if (e.no === 1) k = str(e);
    if (e.no === 2) v = valueAs === 'string' ? str(e) : bytes(e).toString('base64');
  }
  return [k, v];
}

function time(f: Field): string {
  let seconds = 0;
  for (const e of fields(bytes(f))) if (e.no === 1) seconds = int(e);
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function objectMeta(buf: Buffer): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  const finalizers: string[] = [];
  const owners: Record<string, unknown>[] = [];
  for (const f of fields(buf)) {
    switch (f.no) {
      case 1:
        m['name'] = str(f);
        break;
      case 2:
        m['generateName'] = str(f);
        break;
      case 3:
        m['namespace'] = str(f);
        break;
      case 5:
        m['uid'] = str(f);
        break;
      case 6:
        m['resourceVersion'] = str(f);
        break;
      case 7:
        m['generation'] = int(f);
        break;
      case 8:
        m['creationTimestamp'] = time(f);
        break;
      case 11: {
        const [k, v] = mapEntry(f, 'string');
        labels[k] = v;
        break;
      }
      case 12: {
        const [k, v] = mapEntry(f, 'string');
        annotations[k] = v;
        break;
      }
      case 13: {
        const o: Record<string, unknown> = {};
        for (const e of fields(bytes(f))) {
          if (e.no === 1) o['kind'] = str(e);
          if (e.no === 3) o['name'] = str(e);
          if (e.no === 4) o['uid'] = str(e);
          if (e.no === 5) o['apiVersion'] = str(e);
          if (e.no === 6) o['controller'] = e.value !== 0n;
          if (e.no === 7) o['blockOwnerDeletion'] = e.value !== 0n;
        }
        owners.push(o);
        break;
      }
      case 14:
        finalizers.push(str(f));
        break;
    }
  }
  // The Go decoder leaves empty strings unset; so do we, to keep "was it given?" checks meaningful.
  for (const k of Object.keys(m)) if (m[k] === '') delete m[k];
  if (Object.keys(labels).length) m['labels'] = labels;
  if (Object.keys(annotations).length) m['annotations'] = annotations;
  if (finalizers.length) m['finalizers'] = finalizers;
  if (owners.length) m['ownerReferences'] = owners;
  return m;
}

function secret(raw: Buffer): Record<string, unknown> {
  const o: Record<string, unknown> = { metadata: {} };
  const data: Record<string, string> = {};
  const stringData: Record<string, string> = {};
  for (const f of fields(raw)) {
    if (f.no === 1) o['metadata'] = objectMeta(bytes(f));
    if (f.no === 2) {
      const [k, v] = mapEntry(f, 'base64');
      data[k] = v;
    }
    if (f.no === 3) o['type'] = str(f);
    if (f.no === 4) {
      const [k, v] = mapEntry(f, 'string');
      stringData[k] = v;
    }
    if (f.no === 5) o['immutable'] = f.value !== 0n;
  }
  if (Object.keys(data).length) o['data'] = data;
  if (Object.keys(stringData).length) o['stringData'] = stringData;
  return o;
}

function configMap(raw: Buffer): Record<string, unknown> {
  const o: Record<string, unknown> = { metadata: {} };
  const data: Record<string, string> = {};
  const binaryData: Record<string, string> = {};
  for (const f of fields(raw)) {
    if (f.no === 1) o['metadata'] = objectMeta(bytes(f));
    if (f.no === 2) {
      const [k, v] = mapEntry(f, 'string');
      data[k] = v;
    }
    if (f.no === 3) {
      const [k, v] = mapEntry(f, 'base64');
      binaryData[k] = v;
    }
    if (f.no === 4) o['immutable'] = f.value !== 0n;
  }
  if (Object.keys(data).length) o['data'] = data;
  if (Object.keys(binaryData).length) o['binaryData'] = binaryData;
  return o;
}

function namespace(raw: Buffer): Record<string, unknown> {
  const o: Record<string, unknown> = { metadata: {} };
  for (const f of fields(raw)) {
    if (f.no === 1) o['metadata'] = objectMeta(bytes(f));
    if (f.no === 2) {
      const finalizers = fields(bytes(f))
        .filter((e) => e.no === 1)
        .map(str);
      o['spec'] = finalizers.length ? { finalizers } : {};
    }
  }
  return o;
}

/** Decodes a message of string fields into named properties, skipping empty ones. */
function strings(buf: Buffer, names: Record<number, string>): Record<string, string> {
  const o: Record<string, string> = {};
  for (const f of fields(buf)) {
    const n = names[f.no];
    if (n && f.wire === 2 && (f.value as Buffer).length > 0) o[n] = str(f);
  }
  return o;
}

function accessReview(raw: Buffer): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  for (const f of fields(raw)) {
    if (f.no !== 2) continue;
    for (const e of fields(bytes(f))) {
      if (e.no === 1) {
        spec['resourceAttributes'] = strings(bytes(e), { 1: 'namespace', 2: 'verb', 3: 'group', 4: 'version', 5: 'resource', 6: 'subresource', 7: 'name' });
      }
      if (e.no === 2) spec['nonResourceAttributes'] = strings(bytes(e), { 1: 'path', 2: 'verb' });
    }
  }
  return { metadata: {}, spec };
}

function rulesReview(raw: Buffer): Record<string, unknown> {
  let spec: Record<string, unknown> = {};
  for (const f of fields(raw)) if (f.no === 2) spec = strings(bytes(f), { 1: 'namespace' });
  return { metadata: {}, spec };
}

function deleteOptions(raw: Buffer): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const dryRun: string[] = [];
  for (const f of fields(raw)) {
    if (f.no === 1) o['gracePeriodSeconds'] = int(f);
    if (f.no === 2) o['preconditions'] = strings(bytes(f), { 1: 'uid', 2: 'resourceVersion' });
    if (f.no === 3) o['orphanDependents'] = f.value !== 0n;
    if (f.no === 4) o['propagationPolicy'] = str(f);
    if (f.no === 5) dryRun.push(str(f));
  }
  if (dryRun.length) o['dryRun'] = dryRun;
  return o;
}

const DECODERS: Record<string, (raw: Buffer) => Record<string, unknown>> = {
  'v1/DeleteOptions': deleteOptions,
  'meta.k8s.io/v1/DeleteOptions': deleteOptions,
  'v1/Secret': secret,
  'v1/ConfigMap': configMap,
  'v1/Namespace': namespace,
  'authorization.k8s.io/v1/SelfSubjectAccessReview': accessReview,
  'authorization.k8s.io/v1/SelfSubjectRulesReview': rulesReview,
  'authentication.k8s.io/v1/SelfSubjectReview': () => ({ metadata: {} }),
};

/** Decodes a protobuf request body into the JSON form of the object. */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw badRequest('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = Buffer.alloc(0);
  for (const f of fields(body.subarray(4))) {
    if (f.no === 1) {
      for (const t of fields(bytes(f))) {
        if (t.no === 1) apiVersion = str(t);
        if (t.no === 2) kind = str(t);
      }
    }
    if (f.no === 2) raw = bytes(f);
  }
  const key = `${apiVersion}/${kind}`;
  const root = PROTOBUF_ROOTS[key];
  const decode = DECODERS[key] ?? (root ? (buf: Buffer) => decodeMessage(root, buf) : undefined);
  if (!decode) {
    throw failure(415, 'UnsupportedMediaType', `the emulator decodes protobuf only for Secret, ConfigMap, Namespace, ServiceAccount, TokenRequest, Job, CronJob, RBAC objects and self reviews, not ${apiVersion}/${kind}; send application/json`);
  }
  const decoded = decode(raw);
  return kind === 'DeleteOptions' ? decoded : { apiVersion, kind, ...decoded };
}
