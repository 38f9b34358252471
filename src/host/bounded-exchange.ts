import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { readBoundedBody } from '../http-body.js';
import { lookupBudget } from './lookup-scope.js';

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
  // Its own cap, cut to what is left of the command's --timeout inside a lookup (lookup-scope.ts).
  const capMs = lookupBudget(timeoutMs);
  const limitedBy = capMs < timeoutMs ? ' (command deadline)' : '';
  return new Promise((resolve, reject) => {
    // Past the deadline, whatever breaks (the request, the body) is reported as the deadline.
    let expired: Error | undefined;
    const expire = () => {
      expired = new Error(`no answer within ${capMs} ms${limitedBy}`);
      req.destroy(expired);
    };
    const fail = (err: unknown) => {
      clearTimeout(timer);
      reject(expired ?? err);
    };
    const req = open((res) => {
      readBoundedBody(res, maxBytes, `${what} answer`).then(
        (body) => resolve({ status: res.statusCode ?? 0, body: body.toString('utf8'), headers: res.headers }),
        (err: unknown) => {
          req.destroy();
          fail(err);
        },
      );
    });
    const timer = setTimeout(expire, capMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', expire);
    req.on('error', fail);
    req.end();
  });
}

/** The short reason a failed exchange gives in a skip note: the error code when there is one. */
export function describeFailure(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? String(err);
}
