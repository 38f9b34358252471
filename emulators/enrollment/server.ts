/**
 * The two HTTP listeners and request dispatch. Every request to an emulated route is logged
 * before anything else happens, so even a request answered by a dropped connection shows up.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROL_PREFIX, type ControllableEmulator, handleControl } from './control-api.js';
import { handleConnection } from './connections.js';
import { handleEnroll } from './enroll.js';
import { playFault } from './fault-responses.js';
import { answersItself, describeStep, type FaultScript } from './fault-script.js';
import { handleHealthCheck } from './health-check.js';
import { handleValidateKey, handleValidateKeys } from './validate-key.js';
import { MAX_REQUEST_BODY_BYTES, type ResolvedEmulatorOptions } from './options.js';
import { readBody } from './read-body.js';
import { plainErrors, send } from './reply.js';
import type { ListenerName, RequestLog } from './request-log.js';
import { ROUTE_METHODS, routeForPath } from './routes.js';
import type { RunnerRegistry } from './runner-registry.js';

export interface EmulatorCore {
  opts: ResolvedEmulatorOptions;
  log: RequestLog;
  registry: RunnerRegistry;
  faults: FaultScript;
  control: ControllableEmulator;
  /** Aborted by close(), so scripted delays do not keep the process alive. */
  closing: AbortSignal;
}

const CONTROL_BODY_LIMIT = 1024 * 1024;

export function createListener(listener: ListenerName, core: EmulatorCore): Server {
  const server = createServer((req, res) => {
    handle(listener, req, res, core).catch((err: unknown) => {
      send(res, null, { status: 500, body: { errors: [`emulator bug: ${(err as Error).message}`] } });
    });
  });
  return server;
}

async function handle(listener: ListenerName, req: IncomingMessage, res: ServerResponse, core: EmulatorCore) {
  const rawUrl = req.url ?? '/';
  const path = rawUrl.split('?', 1)[0]!;
  if (listener === 'main' && path.startsWith(CONTROL_PREFIX)) {
    const { body, overLimit } = await readBody(req, CONTROL_BODY_LIMIT);
    if (overLimit) return send(res, null, plainErrors(413));
    return send(res, null, handleControl(req.method ?? '', path, body, core.control));
  }

  const route = routeForPath(path);
  const record = core.log.open(req, listener, route, core.opts.now());
  const methodOk = route !== null && req.method === ROUTE_METHODS[route];
  // Taken at arrival, before any await, so concurrent requests consume steps in arrival order.
  // Only the main listener is scripted: the redirect destination must answer like the real API.
  const step = methodOk && listener === 'main' ? core.faults.next(route) : undefined;
  if (step) record.fault = describeStep(step);
  const read = await readBody(req, MAX_REQUEST_BODY_BYTES);
  record.body = read.body.toString('utf8');
  record.bodyBytes = read.bytes;
  if (read.broken) {
    record.detail = 'client closed the connection before the body was complete';
    res.destroy();
    return;
  }
  if (!route) return send(res, record, { ...plainErrors(404), detail: `no emulated endpoint at ${path}` });
  if (!methodOk) {
    return send(res, record, {
      ...plainErrors(405),
      headers: { Allow: ROUTE_METHODS[route] },
      detail: `${route} takes ${ROUTE_METHODS[route]}, got ${req.method}`,
    });
  }

  if (step) {
    if (step.delayMs) {
      const gone = new AbortController();
      res.once('close', () => gone.abort());
      try {
        await sleep(step.delayMs, undefined, { signal: AbortSignal.any([gone.signal, core.closing]) });
      } catch {
        record.detail = 'connection closed during the scripted delay';
        return;
      }
    }
    if (answersItself(step)) {
      return playFault(step, {
        res,
        record,
        route,
        orgId: core.opts.orgId,
        requestUrl: rawUrl,
        otherHostUrl: core.control.otherHostUrl,
      });
    }
    if (step.headers) for (const [k, v] of Object.entries(step.headers)) res.setHeader(k, v);
  }

  if (read.overLimit) {
    return send(res, record, {
      ...plainErrors(413),
      detail: `request body of ${read.bytes} bytes exceeds ${MAX_REQUEST_BODY_BYTES}`,
    });
  }
  const reply =
    route === 'health'
      ? handleHealthCheck(record.headers, new URL(rawUrl, 'http://emulator.invalid').searchParams, core.opts, core.registry)
      : route === 'validate'
        ? handleValidateKey(record.headers, core.opts)
        : route === 'validate_keys'
          ? handleValidateKeys(record.headers, core.opts)
          : route === 'connections'
            ? handleConnection(record.headers, read.body, core.opts, core.registry, core.registry.connections)
            : handleEnroll(route, record.headers, read.body, core.opts, core.registry);
  send(res, record, reply);
}

export function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/** A URL a client can connect to: wildcard binds are reached through loopback. */
export function urlFor(address: AddressInfo): string {
  let host = address.address;
  if (host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/**
 * Binds the redirect destination on a different loopback address, so a redirect to it is cross-host
 * and not just cross-port. Systems without 127.0.0.0/8 aliases (macOS) get another port instead.
 */
export async function listenOnOtherLoopback(
  server: Server,
  mainAddress: string,
): Promise<{ address: AddressInfo; distinctAddress: boolean }> {
  const main = mainAddress === '0.0.0.0' ? '127.0.0.1' : mainAddress === '::' ? '::1' : mainAddress;
  for (const candidate of ['127.0.0.2', '127.0.0.3', '127.0.0.1']) {
    if (candidate === main) continue;
    try {
      return { address: await listen(server, candidate, 0), distinctAddress: true };
    } catch {
      // Address not available here; try the next one.
    }
  }
  return { address: await listen(server, main, 0), distinctAddress: false };
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
