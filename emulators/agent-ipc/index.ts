/**
 * Emulator of the running agent's IPC API (docs/protocol.md §4b): HTTPS on loopback with its own
 * certificate, bearer-token auth (no header → 401, wrong token → 403), GET /agent/hostname (a JSON
 * string, "" when the agent could not resolve one) and GET /agent/version (the agent's version
 * object). It can write `auth_token` and `ipc_cert.pem` where the agent would. Imports nothing
 * from the product.
 */

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { serverLifecycle } from '../server-lifecycle.js';
import { generateIpcCertificate } from './ipc-certificate.js';

/** The JSON of the agent's version.Version (Go field names, no tags). */
interface AgentVersionObject {
  Major: number;
  Minor: number;
  Patch: number;
  Pre: string;
  Meta: string;
  Commit: string;
}

interface AgentIpcState {
  /** Answer of /agent/hostname; "" = the agent could not resolve one. */
  hostname: string;
  /** Answer of /agent/version; null = 404 (an agent without that endpoint). */
  version: AgentVersionObject | null;
  /** Delay before every answer (a slow or stuck agent). */
  delayMs?: number;
  /** Answer every request with this status instead (an agent that is starting or broken). */
  failStatus?: number;
}

interface IpcRequest {
  method: string;
  path: string;
  authorization?: string;
  /** Whether the client presented the IPC certificate as its client certificate. */
  clientCert: boolean;
  status: number;
}

export interface AgentIpcEmulator {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly token: string;
  /** Certificate + key in one PEM, as ipc_cert.pem. */
  readonly certPem: string;
  readonly requests: IpcRequest[];
  set(patch: Partial<AgentIpcState>): void;
  /** Writes auth_token (and ipc_cert.pem) into dir as the agent does next to datadog.yaml; returns their paths. */
  writeFiles(dir: string): Promise<{ authToken: string; ipcCert: string }>;
  close(): Promise<void>;
}

const DEFAULT_AGENT_VERSION: AgentVersionObject = { Major: 7, Minor: 66, Patch: 0, Pre: '', Meta: '', Commit: 'abc1234' };

let certPromise: Promise<{ cert: string; key: string; pem: string }> | undefined;

export async function startAgentIpcEmulator(initial: Partial<AgentIpcState> = {}): Promise<AgentIpcEmulator> {
  certPromise ??= generateIpcCertificate();
  const cert = await certPromise;
  const token = randomBytes(32).toString('hex');
  let state: AgentIpcState = { hostname: 'agent-host', version: DEFAULT_AGENT_VERSION, ...initial };
  const requests: IpcRequest[] = [];
  const life = serverLifecycle();

  const answer = (req: IncomingMessage): { status: number; body: unknown } => {
    const auth = req.headers.authorization;
    if (!auth) return { status: 401, body: { error: 'no session token provided' } };
    if (auth !== `Bearer ${token}`) return { status: 403, body: { error: 'invalid session token' } };
    if (state.failStatus) return { status: state.failStatus, body: { error: 'scripted failure' } };
    if (req.method !== 'GET') return { status: 405, body: { error: 'method not allowed' } };
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/agent/hostname') return { status: 200, body: state.hostname };
    if (path === '/agent/version' && state.version) return { status: 200, body: state.version };
    return { status: 404, body: { error: 'not found' } };
  };

  const server = createServer(
    { cert: cert.cert, key: cert.key, ca: cert.cert, requestCert: true, rejectUnauthorized: false },
    (req, res: ServerResponse) => {
      req.resume();
      const { status, body } = answer(req);
      const socket = req.socket as TLSSocket;
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '/',
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        clientCert: socket.authorized === true,
        status,
      });
      life.reply(state.delayMs, () => {
        if (res.destroyed) return;
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    },
  );
  const port = await life.listen(server);
  return {
    host: '127.0.0.1',
    port,
    url: `https://127.0.0.1:${port}`,
    token,
    certPem: cert.pem,
    requests,
    set(patch) {
      state = { ...state, ...patch };
    },
    async writeFiles(dir) {
      const authToken = join(dir, 'auth_token');
      const ipcCert = join(dir, 'ipc_cert.pem');
      await writeFile(authToken, token, { mode: 0o600 });
      await writeFile(ipcCert, cert.pem, { mode: 0o600 });
      return { authToken, ipcCert };
    },
    close: life.close,
  };
}
