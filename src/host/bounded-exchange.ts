import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';

// One small local exchange (agent IPC, cloud metadata, kubelet, docker daemon): a body cap and a hard
// deadline over the whole exchange (a request's own `timeout` only covers socket idleness).

export interface SmallAnswer {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
}

const MAX_SMALL_BODY = 64 * 1024;

/** `open` starts the request with the response callback; the request is ended here. */
export function boundedExchange(
  open: (onResponse: (res: IncomingMessage) => void) => ClientRequest,
  timeoutMs: number,
  what: string,
  maxBytes = MAX_SMALL_BODY,
): Promise<SmallAnswer> {
  return new Promise((resolve, reject) => {
    const req = open((res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) req.destroy(new Error(`${what} answer larger than ${maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

/** The short reason a failed exchange gives in a skip note: the error code when there is one. */
export function describeFailure(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? String(err);
}
