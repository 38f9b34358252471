const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function fnv32a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** k8s.io/apimachinery rand.SafeEncodeString: each character mapped onto an alphabet without vowels. */
function safeEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += SAFE_ALPHANUMS[text.charCodeAt(i) % SAFE_ALPHANUMS.length];
  return out;
}

/**
 * controller.ComputeHash: FNV-32a over the Pod template (here its canonical JSON, the Go code
 * hashes a spew dump) and the collision count, printed in decimal and safe-encoded. Used for
 * pod-template-hash and controller-revision-hash.
 */
export function computeHash(template: unknown, collisionCount?: number): string {
  const parts = [Buffer.from(stableJson(template), 'utf8')];
  if (collisionCount !== undefined && collisionCount !== null) {
    const b = Buffer.alloc(8);
    b.writeUInt32LE(collisionCount >>> 0, 0);
    parts.push(b);
  }
  return safeEncode(String(fnv32a(Buffer.concat(parts))));
}


