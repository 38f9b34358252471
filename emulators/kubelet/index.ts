/**
 * Emulator of a kubelet's API as the agent's kubelet client uses it (docs/protocol.md §4 step 7): HTTPS on
 * loopback with a self-signed certificate, bearer-token auth (no token or a wrong one → 401, as a
 * kubelet with webhook authentication answers), GET /spec (the connection check), GET /pods (a
 * PodList whose pods carry spec.nodeName) and GET /stats/summary (node.nodeName); optionally the
 * read-only plain-HTTP port too, without auth. It writes the token and the CA where a test points
 * kubelet_auth_token_path and kubelet_client_ca. Imports nothing from the product but the shared
 * certificate helper.
 */

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { selfSignedCert } from '../self-signed-cert.js';
import { serverLifecycle } from '../server-lifecycle.js';

interface KubeletState {
  nodeName: string;
  /** Names of the pods running on the node; each is listed with spec.nodeName = nodeName. */
  pods: string[];
  /** Delay before every answer (a slow or stuck kubelet). */
  delayMs?: number;
  /** Answer /pods and /stats/summary with this status instead (a kubelet refusing the agent's RBAC, or broken). */
  failStatus?: number;
  /** Answer /pods with this raw body instead (malformed answers). */
  podsBody?: string;
}

interface KubeletRequest {
  scheme: 'https' | 'http';
  method: string;
  path: string;
  authorization?: string;
  status: number;
}

export interface KubeletEmulator {
  readonly host: string;
  readonly httpsPort: number;
  /** The read-only port, when started with `readOnlyPort: true`. */
  readonly httpPort?: number;
  readonly token: string;
  /** The serving certificate, which is its own CA: what kubelet_client_ca points at. */
  readonly caPem: string;
  readonly requests: KubeletRequest[];
  set(patch: Partial<KubeletState>): void;
  /** Writes `token` and `ca.crt` into dir; returns their paths. */
  writeFiles(dir: string): Promise<{ token: string; ca: string }>;
  close(): Promise<void>;
}

interface KubeletEmulatorOptions extends Partial<KubeletState> {
  /** Also serve the unauthenticated read-only port (10255 on a real node). */
  readOnlyPort?: boolean;
}

let certPromise: Promise<{ cert: string; key: string }> | undefined;

function podList(state: KubeletState): unknown {
  return {
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: {},
    items: state.pods.map((name, i) => ({
      metadata: { name, namespace: 'default', uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` },
      spec: { nodeName: state.nodeName, containers: [{ name: 'main', image: 'registry.example/app:1' }] },
      status: { phase: 'Running', hostIP: '10.0.0.10', podIP: `10.244.0.${i + 2}` },
    })),
  };
}

function route(state: KubeletState, path: string): { status: number; body: string } {
  const json = (status: number, value: unknown) => ({ status, body: JSON.stringify(value) });
  if (path === '/spec' || path === '/spec/') return json(200, { num_cores: 2, memory_capacity: 4 * 1024 ** 3, machine_id: 'emulated' });
  if (path === '/healthz') return { status: 200, body: 'ok' };
  if (state.failStatus && (path === '/pods' || path === '/stats/summary'))
    return json(state.failStatus, { kind: 'Status', code: state.failStatus });
  if (path === '/pods') return state.podsBody !== undefined ? { status: 200, body: state.podsBody } : json(200, podList(state));
  if (path === '/stats/summary') return json(200, { node: { nodeName: state.nodeName, systemContainers: [] }, pods: [] });
  return { status: 404, body: '404 page not found' };
}

export async function startKubeletEmulator(options: KubeletEmulatorOptions = {}): Promise<KubeletEmulator> {
  certPromise ??= selfSignedCert({ subject: '/CN=kubelet-emulator', extendedKeyUsage: 'serverAuth' });
  const cert = await certPromise;
  const token = randomBytes(24).toString('base64url');
  const { readOnlyPort, ...initial } = options;
  let state: KubeletState = { nodeName: 'node-a', pods: ['datadog-agent-x7k2p', 'coredns-5d78c9869d-abcde'], ...initial };
  const requests: KubeletRequest[] = [];
  const life = serverLifecycle();

  const handler = (scheme: 'https' | 'http') => (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const auth = req.headers.authorization;
    let answer: { status: number; body: string };
    if (req.method !== 'GET') answer = { status: 405, body: 'Method Not Allowed' };
    // The secure port authenticates every request; the read-only port none.
    else if (scheme === 'https' && auth !== `Bearer ${token}`) answer = { status: 401, body: 'Unauthorized' };
    else answer = route(state, path);
    requests.push({
      scheme,
      method: req.method ?? '',
      path: req.url ?? '/',
      ...(auth ? { authorization: auth } : {}),
      status: answer.status,
    });
    life.reply(state.delayMs, () => {
      if (res.destroyed) return;
      res.writeHead(answer.status, { 'Content-Type': answer.body.startsWith('{') ? 'application/json' : 'text/plain' });
      res.end(answer.body);
    });
  };

  const httpsPort = await life.listen(createHttpsServer({ cert: cert.cert, key: cert.key }, handler('https')));
  const httpPort = readOnlyPort ? await life.listen(createHttpServer(handler('http'))) : undefined;
  return {
    host: '127.0.0.1',
    httpsPort,
    ...(httpPort === undefined ? {} : { httpPort }),
    token,
    caPem: cert.cert,
    requests,
    set(patch) {
      state = { ...state, ...patch };
    },
    async writeFiles(dir) {
      const paths = { token: join(dir, 'token'), ca: join(dir, 'ca.crt') };
      await writeFile(paths.token, `${token}\n`, { mode: 0o600 });
      await writeFile(paths.ca, cert.cert);
      return paths;
    },
    close: life.close,
  };
}
