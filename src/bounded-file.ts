import type { FileHandle } from 'node:fs/promises';

// The file-side twin of http-body.ts: a file whose size someone else decides (an agent config file,
// an identity file) is read against a cap the caller chooses, and never past it. The size stat gives
// is not trusted (a file still growing, a /proc file that says 0): at most maxBytes + 1 bytes are
// read, and that one byte more is what says "too large" (docs/security.md, the bounds table).

export class FileTooLargeError extends Error {
  constructor(
    readonly limit: number,
    /** What is known of the size: stat's, or at least limit + 1. */
    readonly size: number,
  ) {
    super(`larger than ${limit} bytes`);
  }
}

/** The whole content of the open file, or a FileTooLargeError once it holds more than `maxBytes`. */
export async function readHandleAtMost(handle: FileHandle, maxBytes: number): Promise<Buffer> {
  const { size } = await handle.stat();
  if (size > maxBytes) throw new FileTooLargeError(maxBytes, size);
  // Sized by what stat says (plus one byte, to see growth), grown only while the file goes on.
  let buffer = Buffer.alloc(Math.min(maxBytes, size) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > maxBytes) throw new FileTooLargeError(maxBytes, length);
      const grown = Buffer.alloc(Math.min(maxBytes + 1, buffer.length * 2));
      buffer.copy(grown);
      buffer = grown;
    }
    // Sequential reads (position null): a pipe (`--api-key-file <(…)`) has no offsets.
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  if (length > maxBytes) throw new FileTooLargeError(maxBytes, length);
  return buffer.subarray(0, length);
}

/** "8 MiB", "64 KiB", "2 048 bytes": a cap as an operator reads it. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
