import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { type KindInfo, type KindRegistry, keyOf } from './kinds.js';
import { alreadyExists, badRequest, conflict, failure, forbidden, notFound, type Status, statusSuccess } from './status-errors.js';
import type { Store } from './store.js';
import { applyDefaults, keepStatus, prepareForCreate, statusOnly } from './strategy.js';
import type { KubeObject } from './types.js';
import { checkMicroTimes } from './event-versions.js';
import { checkSecretEncoding, unknownFields, validate } from './validation.js';

export interface WriteOptions {
  dryRun?: boolean;
  /** 'status' for the /status subresource. */
  subresource?: string;
  /** Direct store writes (test setup) keep the status they are given. */
  trusted?: boolean;
  /** The fieldValidation query parameter: Strict rejects unknown fields, Warn reports them, Ignore drops them. */
  fieldValidation?: string;
  /** Receives warnings (unknown fields under Warn) for the Warning response header. */
  warn?: (message: string) => void;
}

export interface DeleteOptions {
  dryRun?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  // gracePeriodSeconds and propagationPolicy are accepted and ignored: with no kubelet and no garbage
  // collector, a delete removes the object at once and leaves its dependents where they are.
}

interface DeleteResult {
  /** What the DELETE response carries: the object (pods, namespaces, or one held by finalizers) or a Success Status. */
  body: KubeObject | Status;
  deleted: boolean;
}

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return s;
}

/** RFC 3339 at second precision, like metav1.Time. */
export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The generic registry: create/update/delete with the apiserver's rules for names, namespaces,
 * resourceVersion, uid, generation, status subresource, finalizers and dry-run.
 */
export class Registry {
  constructor(
    readonly kinds: KindRegistry,
    readonly store: Store,
  ) {}

  kindFor(apiVersion: string, kind: string): KindInfo {
    const info = this.kinds.byApiVersionKind(apiVersion, kind);
    if (!info) throw badRequest(`no kind "${kind}" is registered for version "${apiVersion}"`);
    return info;
  }

  get(info: KindInfo, namespace: string | undefined, name: string): KubeObject {
    const obj = this.store.get(keyOf(info), info.namespaced ? namespace : undefined, name);
    if (!obj) throw notFound(info, name);
    return obj;
  }

  /** Decodes a request body into an object of this kind, as the apiserver's serializer would. */
  decode(info: KindInfo, body: unknown, opts: WriteOptions = {}): KubeObject {
    if (!isPlainObject(body)) throw badRequest(`the object provided is unrecognized (must be of type ${info.kind})`);
    const unknown = unknownFields(info, body);
    if (unknown.length > 0) {
      const list = unknown.map((f) => `unknown field "${f}"`);
      if (opts.fieldValidation === 'Strict') {
        throw badRequest(
          `${info.kind} in version "${info.version}" cannot be handled as a ${info.kind}: strict decoding error: ${list.join(', ')}`,
        );
      }
      if (opts.fieldValidation !== 'Ignore') for (const w of list) opts.warn?.(w);
    }
    const obj = structuredClone(body) as KubeObject;
    // A typed decoder has nowhere to put unknown fields: they are dropped.
    for (const f of unknown) {
      if (f.startsWith('metadata.')) delete (obj.metadata as Record<string, unknown>)[f.slice('metadata.'.length)];
      else delete obj[f];
    }
    const expectedVersion = info.group ? `${info.group}/${info.version}` : info.version;
    if (obj.apiVersion !== undefined && obj.apiVersion !== expectedVersion) {
      throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${expectedVersion})`);
    }
    if (obj.kind !== undefined && obj.kind !== info.kind) {
      throw badRequest(
        `${info.kind} in version "${info.version}" cannot be handled as a ${info.kind}: the kind in the data (${obj.kind}) does not match the expected kind`,
      );
    }
    obj.apiVersion = expectedVersion;
    obj.kind = info.kind;
    if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
    if (!isPlainObject(obj.metadata))
      throw badRequest(`${info.kind} in version "${info.version}" cannot be handled as a ${info.kind}: metadata must be an object`);
    if (info.kind === 'Secret') checkSecretEncoding(obj);
    if (info.kind === 'Event') checkMicroTimes(obj, info.version);
    return info.storage ? info.storage.toStorage(obj) : obj;
  }

  private checkNamespace(info: KindInfo, obj: KubeObject, namespace: string | undefined): void {
    if (!info.namespaced) {
      delete obj.metadata.namespace;
      return;
    }
    if (obj.metadata.namespace && namespace && obj.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const ns = obj.metadata.namespace || namespace;
    if (!ns) throw badRequest('an empty namespace may not be set during creation');
    obj.metadata.namespace = ns;
  }

  /** NamespaceLifecycle admission: no new objects in a missing or terminating namespace. */
  private admitNamespace(info: KindInfo, obj: KubeObject): void {
    if (!info.namespaced) return;
    const ns = this.store.get('v1/Namespace', undefined, obj.metadata.namespace!);
    if (!ns) throw notFound({ group: '', plural: 'namespaces' }, obj.metadata.namespace!);
    if ((ns['status'] as { phase?: string } | undefined)?.phase === 'Terminating') {
      throw forbidden(
        info,
        obj.metadata.name,
        `unable to create new content in namespace ${obj.metadata.namespace} because it is being terminated`,
      );
    }
  }

  create(info: KindInfo, namespace: string | undefined, body: unknown, opts: WriteOptions = {}): KubeObject {
    const obj = this.decode(info, body, opts);
    this.checkNamespace(info, obj, namespace);
    if (obj.metadata.resourceVersion) {
      throw failure(500, 'InternalError', 'resourceVersion should not be set on objects to be created');
    }
    if (!obj.metadata.name && obj.metadata.generateName) {
      obj.metadata.name = obj.metadata.generateName + randomSuffix();
    }
    const meta = obj.metadata;
    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (info.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    applyDefaults(info, obj);
    // Trusted writers (test setup, test fixtures) may seed a status; otherwise it starts as the apiserver sets it.
    if (!(opts.trusted && obj['status'] !== undefined)) prepareForCreate(info, obj);
    validate(info, obj);
    this.admitNamespace(info, obj);
    const key = keyOf(info);
    if (this.store.get(key, meta.namespace, meta.name!)) throw alreadyExists(info, meta.name!);
    if (opts.dryRun) {
      delete obj.metadata.resourceVersion;
      return obj;
    }
    return this.store.commit(key, 'ADDED', obj);
  }

  /** PUT semantics; PATCH computes the patched body and comes through here too. */
  update(info: KindInfo, namespace: string | undefined, name: string, body: unknown, opts: WriteOptions = {}): KubeObject {
    const incoming = this.decode(info, body, opts);
    if (incoming.metadata.name !== name) {
      throw badRequest(`the name of the object (${incoming.metadata.name ?? ''}) does not match the name on the URL (${name})`);
    }
    if (info.namespaced && incoming.metadata.namespace && incoming.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const old = this.get(info, namespace, name);
    if (incoming.metadata.uid && incoming.metadata.uid !== old.metadata.uid) {
      throw conflict(
        info,
        name,
        `Precondition failed: UID in precondition: ${incoming.metadata.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    const wantRv = incoming.metadata.resourceVersion;
    if (wantRv !== undefined && wantRv !== '') {
      if (!/^\d+$/.test(wantRv)) throw badRequest(`invalid resourceVersion: ${JSON.stringify(wantRv)}`);
      if (wantRv !== old.metadata.resourceVersion) throw conflict(info, name);
    }
    let next: KubeObject;
    if (opts.subresource === 'status') {
      next = statusOnly(incoming, old);
    } else {
      next = incoming;
      next.metadata.namespace = old.metadata.namespace;
      if (!info.namespaced) delete next.metadata.namespace;
      applyDefaults(info, next);
      if (!opts.trusted) keepStatus(info, next, old);
    }
    // System-owned metadata always comes from the stored object.
    next.metadata.uid = old.metadata.uid;
    next.metadata.creationTimestamp = old.metadata.creationTimestamp;
    if (old.metadata.deletionTimestamp) {
      next.metadata.deletionTimestamp = old.metadata.deletionTimestamp;
      next.metadata.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
    } else {
      delete next.metadata.deletionTimestamp;
      delete next.metadata.deletionGracePeriodSeconds;
    }
    delete next.metadata.generateName;
    if (old.metadata.generateName) next.metadata.generateName = old.metadata.generateName;
    if (info.tracksGeneration) {
      const oldGen = old.metadata.generation ?? 1;
      next.metadata.generation = isDeepStrictEqual(next['spec'], old['spec']) ? oldGen : oldGen + 1;
    } else delete next.metadata.generation;
    validate(info, next, old);
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    // Writing identical bytes is a no-op in etcd3's GuaranteedUpdate: no new revision, no event.
    if (isDeepStrictEqual(next, old)) return old;
    if (opts.dryRun) return next;
    // shouldDeleteDuringUpdate: removing the last finalizer of an object whose deletion is due
    // (grace period 0) completes it. A status write to a Terminating Pod is just a write.
    if (
      next.metadata.deletionTimestamp &&
      (next.metadata.finalizers ?? []).length === 0 &&
      (old.metadata.finalizers ?? []).length > 0 &&
      (old.metadata.deletionGracePeriodSeconds ?? 0) === 0
    ) {
      const gone = this.store.commit(keyOf(info), 'DELETED', next);
      return gone;
    }
    return this.store.commit(keyOf(info), 'MODIFIED', next);
  }

  delete(info: KindInfo, namespace: string | undefined, name: string, opts: DeleteOptions = {}): DeleteResult {
    const old = this.get(info, namespace, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== old.metadata.uid) {
      throw conflict(info, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(
        info,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
      );
    }
    const key = keyOf(info);
    if ((old.metadata.finalizers ?? []).length > 0) {
      // Finalizers hold the object: it only gets a deletionTimestamp until they are removed.
      if (old.metadata.deletionTimestamp && (old.metadata.deletionGracePeriodSeconds ?? 0) === 0) return { body: old, deleted: false };
      const marked = structuredClone(old);
      if (!old.metadata.deletionTimestamp) {
        marked.metadata.deletionTimestamp = nowTimestamp();
        if (info.tracksGeneration) marked.metadata.generation = (old.metadata.generation ?? 1) + 1;
      }
      marked.metadata.deletionGracePeriodSeconds = 0;
      if (opts.dryRun) return { body: marked, deleted: false };
      return { body: this.store.commit(key, 'MODIFIED', marked), deleted: false };
    }
    if (!opts.dryRun) {
      if (info.kind === 'Namespace') this.purgeNamespace(name);
      this.store.commit(key, 'DELETED', old);
    }
    if (info.returnDeletedObject) return { body: old, deleted: true };
    return {
      body: statusSuccess({
        name,
        ...(info.group ? { group: info.group } : {}),
        kind: info.plural,
        uid: old.metadata.uid,
      }),
      deleted: true,
    };
  }

  /** Stands in for the namespace controller, which empties a namespace before it goes away. */
  private purgeNamespace(namespace: string): void {
    for (const info of this.kinds.all()) {
      if (!info.namespaced) continue;
      for (const obj of this.store.list(keyOf(info), namespace)) {
        this.store.commit(keyOf(info), 'DELETED', obj);
      }
    }
  }
}
