import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { writePrivateFile } from '../../src/storage/index.js';
import { FaultController } from './faults.js';
import { defaultKinds, type KindRegistry, keyOf, servedForm } from './kinds.js';
import { type KubeconfigOptions, renderKubeconfig } from './kubeconfig.js';
import { Authorizer, type Grant } from './rbac.js';
import { type DeleteOptions, Registry } from './registry.js';
import { createRequestHandler, type RecordedRequest } from './server.js';
import { ServiceAccountTokens } from './service-account-tokens.js';
import { Store } from './store.js';
import { clientCaCert, clientCertFor, servingCert } from './tls.js';
import type { ChangeEvent, KubeObject, PolicyRule } from './types.js';

export { KUBE_EMULATOR_DNS_NAME } from './tls.js';

import { WatchHub } from './watch.js';

export type { RecordedRequest } from './server.js';
export type { KubeObject, PolicyRule } from './types.js';

export interface KubeEmulatorOptions {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Changes kept for watch resume and exact-RV reads; a watch from an older RV gets 410 Expired. Default 1000. */
  historyLimit?: number;
  /** How often open watches that allow bookmarks get a BOOKMARK. Default 60000 (the apiserver sends about one a minute). */
  bookmarkIntervalMs?: number;
  /** Token with unrestricted access; random when omitted. */
  adminToken?: string;
  /**
   * Serve HTTPS with a self-signed certificate (default true). kubectl 1.32 does not send bearer
   * tokens to an http:// server, so plain http only suits client-node and fetch.
   */
  tls?: boolean;
  /**
   * Accept client certificates signed by the emulator's client CA (the apiserver's --client-ca-file):
   * the common name is the user, each organisation a group. Off unless asked for (making the CA costs
   * an openssl run). Certificates come from issueClientCertificate().
   */
  clientCertificates?: boolean;
}

export interface KubeEmulator {
  /** https://127.0.0.1:PORT (http:// with tls: false). */
  url: string;
  /** Bearer token of a superuser (system:masters): every request is allowed. */
  adminToken: string;
  /** PEM of the self-signed serving certificate (its own CA); undefined over plain http. */
  caCert: string | undefined;
  /** Stops listening, ends open watches and cuts remaining connections. Idempotent. */
  close(): Promise<void>;
  /**
   * Direct store access for test setup: no authentication, but the
   * same rules as the API (uid, creationTimestamp, resourceVersion, generation, defaults,
   * validation, namespace must exist). Unlike an API create or main-resource update, the
   * status given is kept. Failures throw ApiError carrying the Status the API would answer.
   */
  createObject(obj: KubeObject): KubeObject;
  getObject(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
  /** Like PUT: a metadata.resourceVersion that is set must match (else ApiError 409); an identical object writes nothing. */
  updateObject(obj: KubeObject): KubeObject;
  /**
   * Like DELETE: an object with finalizers only gets a deletionTimestamp; a Namespace takes its
   * contents with it; a bound Pod becomes Terminating for its grace period unless
   * `gracePeriodSeconds: 0`. Preconditions are checked as the API checks them (ApiError 409).
   */
  deleteObject(apiVersion: string, kind: string, namespace: string | undefined, name: string, opts?: DeleteOptions): void;
  listObjects(apiVersion: string, kind: string, namespace?: string): KubeObject[];
  /** Maps a bearer token to a user and rules; called again for the same token, the grants add up. */
  addToken(token: string, grant: { user?: string; namespace?: string; rules: PolicyRule[] }): void;
  /**
   * A client certificate for `user` in `groups` (PEM), signed by the client CA, with rules of its own
   * (granted like addToken's). Needs the `clientCertificates` option.
   */
  issueClientCertificate(
    user: string,
    options?: { groups?: string[]; namespace?: string; rules?: PolicyRule[] },
  ): Promise<{ cert: string; key: string }>;
  /** Kubeconfig YAML for kubectl and client-node; the admin token unless one is given. */
  kubeconfig(opts?: KubeconfigOptions): string;
  /** Writes kubeconfig() to a file with mode 0600. */
  writeKubeconfig(path: string, opts?: KubeconfigOptions): Promise<void>;
  /** Forgets all change history: a watch or exact list from any earlier resourceVersion gets 410 Expired. */
  compact(): void;
  faults: FaultController;
  /** Every request in arrival order (method, path, query, verb, resource, user, status); bodies are never kept. */
  requests: RecordedRequest[];
  /** Observes every committed change (also those made through the direct store methods). Returns an unsubscribe function. */
  onChange(listener: (event: ChangeEvent) => void): () => void;
  /** Current global resourceVersion. */
  readonly resourceVersion: string;
  /** The served kinds; register more before use to extend the emulator. */
  kinds: KindRegistry;
  /** Number of watch streams currently open. */
  readonly openWatches: number;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startKubeEmulator(opts: KubeEmulatorOptions = {}): Promise<KubeEmulator> {
  const host = opts.host ?? '127.0.0.1';
  const kinds = defaultKinds();
  const store = new Store(opts.historyLimit ?? 1000);
  const registry = new Registry(kinds, store);
  const authorizer = new Authorizer();
  const adminToken = opts.adminToken ?? `admin-${randomBytes(18).toString('hex')}`;
  authorizer.addSuperuser(adminToken, 'kubernetes-admin');
  authorizer.useStoredRbac({
    list: (kind, namespace) => store.list(keyOf(kinds.byApiVersionKind('rbac.authorization.k8s.io/v1', kind)!), namespace),
  });
  const tokens = new ServiceAccountTokens((apiVersion, kind, namespace, name) => {
    const info = kinds.byApiVersionKind(apiVersion, kind);
    return info && store.get(keyOf(info), info.namespaced ? namespace : undefined, name);
  });
  authorizer.useIssuedTokens((token) => tokens.authenticate(token));
  const faults = new FaultController();
  const hub = new WatchHub();
  faults.setWatchControls(
    () => hub.dropAll(),
    () => hub.endAll(),
    (text) => hub.writeAll(text),
  );
  const requests: RecordedRequest[] = [];
  let hostPort = '';
  const cert = opts.tls === false ? undefined : await servingCert();
  const handler = createRequestHandler({
    kinds,
    store,
    registry,
    authorizer,
    tokens,
    faults,
    hub,
    requests,
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    hostPort: () => hostPort,
  });
  const clientCa = opts.clientCertificates && cert ? await clientCaCert() : undefined;
  // A certificate is asked for but not required: requests without one go on to the bearer token.
  const server: Server = cert
    ? createHttpsServer(
        { cert: cert.cert, key: cert.key, ...(clientCa ? { ca: clientCa.cert, requestCert: true, rejectUnauthorized: false } : {}) },
        handler,
      )
    : createHttpServer(handler);
  // Tracked at the TCP level so close() also cuts connections still in their TLS handshake,
  // which closeAllConnections() does not know about yet.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const addr = await listen(server, opts.port ?? 0, host);
  const urlHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  hostPort = `${urlHost}:${addr.port}`;
  const url = `${cert ? 'https' : 'http'}://${hostPort}`;

  const infoOf = (apiVersion: string, kind: string) => registry.kindFor(apiVersion, kind);
  let closed: Promise<void> | undefined;

  const emulator: KubeEmulator = {
    url,
    adminToken,
    caCert: cert?.cert,
    faults,
    requests,
    kinds,
    get resourceVersion() {
      return String(store.currentRv);
    },
    get openWatches() {
      return hub.size;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        hub.endAll();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        // Requests held by a hang fault finish against their cut connections instead of waiting forever.
        faults.clear();
      });
      return closed;
    },
    createObject(obj) {
      const info = infoOf(obj.apiVersion, obj.kind);
      return registry.create(info, obj.metadata?.namespace, obj, { trusted: true });
    },
    getObject(apiVersion, kind, namespace, name) {
      const info = infoOf(apiVersion, kind);
      const obj = store.get(keyOf(info), info.namespaced ? namespace : undefined, name);
      return obj && servedForm(info, obj);
    },
    updateObject(obj) {
      const info = infoOf(obj.apiVersion, obj.kind);
      return registry.update(info, obj.metadata?.namespace, obj.metadata?.name ?? '', obj, { trusted: true });
    },
    deleteObject(apiVersion, kind, namespace, name, opts) {
      const info = infoOf(apiVersion, kind);
      registry.delete(info, info.namespaced ? namespace : undefined, name, opts);
    },
    listObjects(apiVersion, kind, namespace) {
      const info = infoOf(apiVersion, kind);
      return store.list(keyOf(info), namespace).map((o) => servedForm(info, o));
    },
    addToken(token: string, grant: Grant) {
      authorizer.addToken(token, grant);
    },
    async issueClientCertificate(user, options = {}) {
      if (!clientCa) throw new Error('issueClientCertificate: start the emulator with clientCertificates: true');
      authorizer.addClientCertGrant(user, {
        ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
        rules: options.rules ?? [],
      });
      return clientCertFor(user, options.groups ?? []);
    },
    kubeconfig(kopts = {}) {
      return renderKubeconfig(url, kopts.token ?? adminToken, cert?.cert, kopts);
    },
    async writeKubeconfig(path, kopts = {}) {
      // It holds a bearer token: written as an identity file is, never through a link or into an existing file.
      await writePrivateFile(path, renderKubeconfig(url, kopts.token ?? adminToken, cert?.cert, kopts), 'kubeconfig files');
    },
    compact() {
      store.compact();
    },
    onChange(listener) {
      return store.subscribe(listener);
    },
  };
  return emulator;
}

/** Creates these namespaces if missing (kube-system always included: its uid serves as a cluster id). */
export function seedNamespaces(emu: KubeEmulator, names: string[] = ['default']): KubeObject[] {
  const all = [...new Set([...names, 'kube-system'])];
  return all.map(
    (name) =>
      emu.getObject('v1', 'Namespace', undefined, name) ??
      emu.createObject({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      }),
  );
}
