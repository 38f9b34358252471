/**
 * Emulator of the docker daemon's API as the agent's docker client uses it for the hostname
 * (docs/protocol.md §4 step 7): HTTP over a unix socket (what DOCKER_HOST=unix://… or /var/run/docker.sock
 * names), or on a loopback TCP port (DOCKER_HOST=tcp://127.0.0.1:PORT). GET /_ping answers the
 * API-Version header the client negotiates with; GET /info and /v<version>/info answer the daemon's
 * info, whose `Name` is the host's name. Imports nothing from the product.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverLifecycle } from '../server-lifecycle.js';

interface DockerDaemonState {
  /** The daemon's Name (the host's hostname on a real daemon). */
  name: string;
  /** Highest API version the daemon speaks, sent as API-Version on /_ping. */
  apiVersion: string;
  delayMs?: number;
  /** Answer /info with this status instead. */
  failStatus?: number;
}

interface DockerRequest {
  method: string;
  path: string;
  status: number;
}

export interface DockerDaemonEmulator {
  /** unix:///…/docker.sock, or tcp://127.0.0.1:PORT with `tcp: true`: the value for DOCKER_HOST. */
  readonly dockerHost: string;
  /** The socket file, when listening on a unix socket. */
  readonly socketPath?: string;
  readonly requests: DockerRequest[];
  set(patch: Partial<DockerDaemonState>): void;
  close(): Promise<void>;
}

interface DockerDaemonEmulatorOptions extends Partial<DockerDaemonState> {
  /** Listen on a loopback TCP port instead of a unix socket. */
  tcp?: boolean;
  /** Directory for the socket (default: a new temporary one, removed on close); the socket is <dir>/docker.sock. */
  socketDir?: string;
}

function answer(state: DockerDaemonState, req: IncomingMessage): { status: number; body: string; headers?: Record<string, string> } {
  const json = (status: number, value: unknown) => ({ status, body: JSON.stringify(value) });
  if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { message: 'method not allowed' });
  const path = (req.url ?? '/').split('?', 1)[0]!;
  const versioned = /^\/v(\d+\.\d+)(\/.*)$/.exec(path);
  if (versioned && Number(versioned[1]) > Number(state.apiVersion)) {
    return json(400, { message: `client version ${versioned[1]} is too new. Maximum supported API version is ${state.apiVersion}` });
  }
  const route = versioned ? versioned[2] : path;
  if (route === '/_ping')
    return { status: 200, body: 'OK', headers: { 'API-Version': state.apiVersion, 'Docker-Experimental': 'false', OSType: 'linux' } };
  if (route === '/info') {
    if (state.failStatus) return json(state.failStatus, { message: 'scripted failure' });
    return json(200, {
      ID: 'EMUL:ATED:0000',
      Name: state.name,
      ServerVersion: '27.3.1',
      OperatingSystem: 'Emulated Linux',
      OSType: 'linux',
      Containers: 3,
      Images: 5,
    });
  }
  return json(404, { message: 'page not found' });
}

export async function startDockerDaemonEmulator(options: DockerDaemonEmulatorOptions = {}): Promise<DockerDaemonEmulator> {
  const { tcp, socketDir, ...initial } = options;
  let state: DockerDaemonState = { name: 'docker-host-1', apiVersion: '1.47', ...initial };
  const requests: DockerRequest[] = [];
  const life = serverLifecycle();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const a = answer(state, req);
    requests.push({ method: req.method ?? '', path: req.url ?? '/', status: a.status });
    life.reply(state.delayMs, () => {
      if (res.destroyed) return;
      res.writeHead(a.status, { 'Content-Type': a.body.startsWith('{') ? 'application/json' : 'text/plain', ...a.headers });
      res.end(a.body);
    });
  });
  const ownDir = tcp || socketDir ? undefined : await mkdtemp(join(tmpdir(), 'docker-emulator-'));
  const socketPath = tcp ? undefined : join(socketDir ?? ownDir!, 'docker.sock');
  const port = await life.listen(server, socketPath);
  const dockerHost = socketPath ? `unix://${socketPath}` : `tcp://127.0.0.1:${port}`;
  let closed: Promise<void> | undefined;
  return {
    dockerHost,
    ...(socketPath ? { socketPath } : {}),
    requests,
    set(patch) {
      state = { ...state, ...patch };
    },
    close() {
      closed ??= life.close().then(() => (ownDir ? rm(ownDir, { recursive: true, force: true }) : undefined));
      return closed;
    },
  };
}
