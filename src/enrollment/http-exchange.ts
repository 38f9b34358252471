import { commonJs } from '../lazy-module.js';

// One HTTP exchange over undici: no redirect following (a redirect must never carry the API key to
// another host), a hard cap on the response body, proxies from HTTPS_PROXY/NO_PROXY, TLS always
// verified (extra CAs come from NODE_EXTRA_CA_CERTS through node's TLS defaults).

export const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface HttpResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

export class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`response body larger than ${limit} bytes`);
  }
}

let dispatcherPromise: Promise<import('undici').Dispatcher> | undefined;

async function dispatcher(): Promise<import('undici').Dispatcher> {
  dispatcherPromise ??= import('undici').then((mod) => new (commonJs(mod).EnvHttpProxyAgent)());
  return dispatcherPromise;
}

export async function exchange(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
): Promise<HttpResponse> {
  const { request } = commonJs(await import('undici'));
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no complete answer within ${Math.round(timeoutMs)} ms`)), timeoutMs);
  try {
    const res = await request(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      dispatcher: await dispatcher(),
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_RESPONSE_BYTES) {
        res.body.destroy();
        throw new ResponseTooLargeError(MAX_RESPONSE_BYTES);
      }
      chunks.push(chunk as Buffer);
    }
    const flat: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(res.headers)) flat[name] = Array.isArray(value) ? value.join(', ') : value;
    return { status: res.statusCode, headers: flat, body: Buffer.concat(chunks).toString('utf8') };
  } finally {
    clearTimeout(timer);
  }
}

/** A short, key-free description of a network failure for retry logs and error messages. */
export function describeNetworkError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code;
  const message = e.cause?.message ?? e.message ?? String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
