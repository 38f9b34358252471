import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../errors.js';
import { parseListenAddress } from './listen-address.js';
import { METRICS_CONTENT_TYPE, type ReloadMetrics } from './reload-metrics.js';

// `watch --listen ADDR`: /healthz (the watch or a list was heard from recently), /readyz (an
// identity is loaded) and /metrics (Prometheus text). Plain HTTP, no key material anywhere.
//
// A long-lived server open to whatever reaches its port: it must never take the descriptors the
// watcher needs to write an identity, nor stop answering probes (docs/commands.md, `watch --listen`).
// So: at most MAX_CONNECTIONS at once (Node closes any more the moment they are accepted), and a
// connection that is silent, slow to send its headers or its request, or idle between requests is
// closed after a few seconds. Probes and a scraper need one or two connections each.

/** Connections served at once; more are closed as soon as they are accepted. */
const MAX_CONNECTIONS = 32;
/** A connection that sends nothing for this long is closed (the socket's idle timeout). */
const IDLE_SOCKET_MS = 10_000;
const HEADERS_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

interface HealthSource {
  metrics: ReloadMetrics;
  ready(): boolean;
  /** /healthz fails after this long without a watch event or successful list. */
  staleMs: number;
  now(): number;
}

export { parseListenAddress };

export interface HealthServer {
  /** host:port actually bound (port 0 resolved). */
  address: string;
  close(): Promise<void>;
}

export async function startHealthServer(listen: string, source: HealthSource): Promise<HealthServer> {
  const { host, port } = parseListenAddress(listen);
  const server: Server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // How often the two timeouts above are checked (Node's default, 30 s, would let them run long).
      connectionsCheckingInterval: 1_000,
    },
    (req, res) => answer(source, req, res),
  );
  server.maxConnections = MAX_CONNECTIONS;
  // No 'timeout' listener: Node destroys the idle socket itself.
  server.setTimeout(IDLE_SOCKET_MS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new UsageError(`--listen ${listen}: cannot listen (${err.code ?? err.message})`, 'Pick a free port, or an address of this host.'),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  // Once listening, a failed accept (descriptors short for a moment) costs that one connection, not the watcher.
  server.on('error', () => undefined);
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    address: `${shownHost}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answer(source: HealthSource, req: IncomingMessage, res: ServerResponse) {
  const path = (req.url ?? '/').split('?')[0];
  const reply = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
    res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed\n');
  if (path === '/healthz') {
    const health = source.metrics.health(source.now(), source.staleMs);
    const seconds = Math.round(health.silentForMs / 1000);
    // Only what happened: before the first successful list there is no "last list" to speak of.
    if (!health.heard) {
      return health.ok
        ? reply(200, `ok: started ${seconds} s ago; no watch event or successful list yet\n`)
        : reply(503, `stale: no watch event or successful list since start, ${seconds} s ago\n`);
    }
    return health.ok
      ? reply(200, `ok: last watch event or list ${seconds} s ago\n`)
      : reply(503, `stale: no watch event or successful list for ${seconds} s\n`);
  }
  if (path === '/readyz') {
    if (source.ready()) return reply(200, `ok: identity ${source.metrics.fingerprint} loaded\n`);
    return reply(
      503,
      source.metrics.acceptedFingerprint
        ? 'not ready: the last identity could not be applied (see apply-error)\n'
        : 'not ready: no identity loaded yet\n',
    );
  }
  if (path === '/metrics') return reply(200, source.metrics.render(source.now()), METRICS_CONTENT_TYPE);
  return reply(404, 'not found: try /healthz, /readyz or /metrics\n');
}
