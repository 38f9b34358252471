import type { KeyObject } from 'node:crypto';

/** SPKI PEM sent at enrollment: node already emits 64-column lines and a trailing newline. */
export function publicKeyPem(publicKey: KeyObject): string {
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}
