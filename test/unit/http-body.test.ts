import { once } from 'node:events';
import { createServer, get, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { boundedExchange } from '../../src/host/bounded-exchange.js';
import { readBoundedBody, ResponseTooLargeError } from '../../src/http-body.js';

// The one body reader: a cap in bytes per call, refusal past it (never a silent cut), and the
// response destroyed at once.

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function response(url: string): Promise<IncomingMessage> {
  const req = get(url);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  return res;
}

describe('readBoundedBody', () => {
  it('takes a body of exactly the cap and refuses one byte more', async () => {
    const url = await serve((req, res) => res.end('x'.repeat(Number(req.url!.slice(1)))));
    expect((await readBoundedBody(await response(`${url}/100`), 100)).toString()).toBe('x'.repeat(100));
    const err = await readBoundedBody(await response(`${url}/101`), 100, 'kubelet answer').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as ResponseTooLargeError).limit).toBe(100);
    expect((err as Error).message).toBe('kubelet answer larger than 100 bytes');
  });

  it('counts bytes, not characters', async () => {
    const url = await serve((_req, res) => res.end('é'.repeat(10)));
    await expect(readBoundedBody(await response(url), 15)).rejects.toBeInstanceOf(ResponseTooLargeError);
    expect((await readBoundedBody(await response(url), 20)).toString('utf8')).toBe('é'.repeat(10));
  });

  it('stops reading past the cap: the sender sees the connection closed before it finished', async () => {
    let closed: Promise<unknown> | undefined;
    const url = await serve((_req, res) => {
      closed = once(res, 'close');
      // Never ends: only the reader's refusal closes this exchange.
      res.write('y'.repeat(64 * 1024));
    });
    await expect(readBoundedBody(await response(url), 1024)).rejects.toBeInstanceOf(ResponseTooLargeError);
    await closed;
  });

  it('a body cut off by the peer is an error, not a short body', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Length': '1000' });
      res.write('partial', () => res.socket?.destroy());
    });
    await expect(readBoundedBody(await response(url), 10_000)).rejects.toThrow();
  });
});

describe('boundedExchange reads through it', () => {
  it('refuses an answer over its cap, naming what was asked', async () => {
    const url = await serve((_req, res) => res.end('z'.repeat(2048)));
    await expect(boundedExchange((onResponse) => request(url, onResponse), 5000, 'metadata', 1024)).rejects.toThrow(
      'metadata answer larger than 1024 bytes',
    );
    expect((await boundedExchange((onResponse) => request(url, onResponse), 5000, 'metadata', 4096)).body).toBe('z'.repeat(2048));
  });

  it('a body that stalls past the deadline is reported as the deadline, not as a reset', async () => {
    const url = await serve((_req, res) => res.write('started'));
    await expect(boundedExchange((onResponse) => request(url, onResponse), 50, 'docker')).rejects.toThrow('no answer within 50 ms');
  });
});
