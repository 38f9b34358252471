/**
 * Reads a request body with a cap. Past the cap the rest is drained rather than refused, so the
 * client is not still writing when the 413 arrives (it would see a reset instead of the status).
 */
import type { IncomingMessage } from 'node:http';

/** Beyond this the client is abusive, not buggy: stop draining and drop the connection. */
const DRAIN_CAP_BYTES = 16 * 1024 * 1024;

interface ReadBody {
  /** The first `limit` bytes. */
  body: Buffer;
  /** Total bytes received. */
  bytes: number;
  overLimit: boolean;
  /** The client went away, or sent more than even the drain allows. */
  broken: boolean;
}

export async function readBody(req: IncomingMessage, limit: number): Promise<ReadBody> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let bytes = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (kept < limit) {
        const piece = chunk.subarray(0, limit - kept);
        chunks.push(piece);
        kept += piece.length;
      }
      if (bytes > DRAIN_CAP_BYTES) {
        req.destroy();
        return { body: Buffer.concat(chunks), bytes, overLimit: true, broken: true };
      }
    }
  } catch {
    return { body: Buffer.concat(chunks), bytes, overLimit: bytes > limit, broken: true };
  }
  return { body: Buffer.concat(chunks), bytes, overLimit: bytes > limit, broken: false };
}
