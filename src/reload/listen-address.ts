import { UsageError } from '../errors.js';

// --listen's syntax, in a module of its own so the command table can check the flag as it is parsed
// without loading node:http.

/** `9090`, `:9090` (every interface), `127.0.0.1:9090`, `[::1]:9090`, `localhost:0`. */
export function parseListenAddress(value: string): { host?: string; port: number } {
  const match = /^(?:(?:\[([^\]]+)\]|([^:[\]]*)):)?(\d+)$/.exec(value.trim());
  const port = match ? Number(match[3]) : Number.NaN;
  if (!match || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--listen ${JSON.stringify(value)} is not an address: use PORT, :PORT or HOST:PORT (e.g. 127.0.0.1:9090)`);
  }
  const host = match[1] ?? match[2];
  return host ? { host, port } : { port };
}
