import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../errors.js';
import { parseListenAddress } from './listen-address.js';
import { METRICS_CONTENT_TYPE, type ReloadMetrics } from './reload-metrics.js';

// `watch --listen ADDR`: /healthz (the watch or a list was heard from recently), /readyz (an
// identity is loaded) and /metrics (Prometheus text). Plain HTTP, no key material anywhere.

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
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed\n');
    if (path === '/healthz') {
      const health = source.metrics.health(source.now(), source.staleMs);
      const seconds = Math.round(health.silentForMs / 1000);
      return health.ok ? reply(200, `ok: last watch event or list ${seconds} s ago\n`) : reply(503, `stale: no watch event or successful list for ${seconds} s\n`);
    }
    if (path === '/readyz') {
      return source.ready() ? reply(200, `ok: identity ${source.metrics.fingerprint} loaded\n`) : reply(503, source.metrics.fingerprint ? 'not ready: the last identity could not be applied (see apply-error)\n' : 'not ready: no identity loaded yet\n');
    }
    if (path === '/metrics') return reply(200, source.metrics.render(source.now()), METRICS_CONTENT_TYPE);
    return reply(404, 'not found: try /healthz, /readyz or /metrics\n');
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new UsageError(`--listen ${listen}: cannot listen (${err.code ?? err.message})`, 'Pick a free port, or an address of this host.')));
    server.listen(port, host, () => resolve());
  });
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
