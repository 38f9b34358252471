import type { ClientRequest, IncomingMessage } from 'node:http';

// One small local exchange (agent IPC, cloud metadata): a body cap and a hard deadline over the whole
// exchange (a request's own `timeout` only covers socket idleness).

export interface SmallAnswer {
  status: number;
  body: string;
}

export const MAX_SMALL_BODY = 64 * 1024;

/** `open` starts the request with the response callback; the request is ended here. */
export function boundedExchange(open: (onResponse: (res: IncomingMessage) => void) => ClientRequest, timeoutMs: number, what: string): Promise<SmallAnswer> {
  return new Promise((resolve, reject) => {
    const req = open((res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_SMALL_BODY) req.destroy(new Error(`${what} answer larger than ${MAX_SMALL_BODY} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
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
