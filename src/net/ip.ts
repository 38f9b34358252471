import { isIP } from 'node:net';

// Address facts every network path shares (the agent's IPC, proxies and NO_PROXY, SOCKS): one reading
// of IPv6 text, one CIDR test, one idea of loopback.

/** The 16 bytes of an IPv6 address written with or without `::`. */
export function expandV6(ip: string): number[] {
  const [head, tail] = ip.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return all.flatMap((g) => {
    const n = Number.parseInt(g, 16) || 0;
    return [n >> 8, n & 0xff];
  });
}

/** `ip` inside `cidr` (same family only; a malformed range matches nothing). */
export function ipInCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/');
  const bits = Number(bitsText);
  const family = isIP(base ?? '');
  if (!family || family !== isIP(ip) || !Number.isInteger(bits)) return false;
  const bytes = (a: string) => (family === 4 ? a.split('.').map(Number) : expandV6(a));
  const a = bytes(ip);
  const b = bytes(base!);
  for (let i = 0, left = bits; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if (((a[i] ?? 0) & mask) !== ((b[i] ?? 0) & mask)) return false;
  }
  return true;
}

/**
 * `localhost`, 127.0.0.0/8 or ::1 (in any spelling, brackets allowed): what never leaves the machine.
 * Go's net.IP.IsLoopback and "localhost", as httpproxy and the agent's IPC client read them.
 */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return true;
  const family = isIP(bare);
  if (family === 4) return bare.startsWith('127.');
  if (family === 6) return expandV6(bare).every((b, i) => b === (i === 15 ? 1 : 0));
  return false;
}
