import { isIPv4 } from 'node:net';

// Loaded before every test file (vitest setupFiles): no test, and no process a test spawns, may
// ever reach the link-local metadata service 169.254.169.254; this network forbids it and flags it.
// Port 1 on loopback: nothing unprivileged can listen there, so a lookup is refused at once.
export const CLOSED_METADATA_URL = 'http://127.0.0.1:1';

/** True for an http URL whose host is a loopback address. */
export function isLoopbackUrl(value: string | undefined): boolean {
  if (!value) return false;
  try {
    const { protocol, hostname } = new URL(value);
    return protocol === 'http:' && (hostname === 'localhost' || (isIPv4(hostname) && hostname.startsWith('127.')) || hostname === '[::1]');
  } catch {
    return false;
  }
}

if (!isLoopbackUrl(process.env.PAR_IDENTITY_CLOUD_METADATA_URL)) process.env.PAR_IDENTITY_CLOUD_METADATA_URL = CLOSED_METADATA_URL;
