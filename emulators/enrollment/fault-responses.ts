/** Writes the response a scripted fault step asks for (see FaultStep for each kind). */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { successBody } from './enroll.js';
import type { FaultStep } from './fault-script.js';
import { plainErrors, type Reply, send } from './reply.js';
import type { RecordedRequest } from './request-log.js';
import type { Route } from './routes.js';

interface FaultContext {
  res: ServerResponse;
  record: RecordedRequest;
  route: Route;
  orgId: number;
  /** Path and query of the request, reused verbatim on the redirect destination. */
  requestUrl: string;
  otherHostUrl: string;
}

const OVERSIZE_CHUNK = 64 * 1024;

export async function playFault(step: FaultStep, ctx: FaultContext): Promise<void> {
  const headers: Record<string, string> = {
    ...(step.retryAfter !== undefined ? { 'Retry-After': step.retryAfter } : {}),
    ...step.headers,
  };
  if (step.dropConnection) return dropMidResponse(step, ctx, headers);
  if (step.oversizeBytes !== undefined) return streamOversize(step.oversizeBytes, step.status ?? 200, ctx, headers);
  send(ctx.res, ctx.record, cannedReply(step, ctx, headers));
}

function cannedReply(step: FaultStep, ctx: FaultContext, headers: Record<string, string>): Reply {
  if (step.redirectToOtherHost) {
    return {
      status: step.status ?? 307,
      body: '',
      headers: { Location: `${ctx.otherHostUrl}${ctx.requestUrl}`, ...headers },
    };
  }
  if (step.echoRequest) {
    const echoed = Object.entries(ctx.record.headers)
      .sort(([a], [b]) => Number(!a.startsWith('dd-')) - Number(!b.startsWith('dd-')))
      .map(([name, value]) => `${name}: ${value}`)
      .join('; ');
    const body = { errors: [{ title: 'Bad Request', detail: `invalid request (headers: ${echoed}; body: ${ctx.record.body})` }] };
    return { status: step.status ?? 400, body, headers };
  }
  const status = step.status ?? (step.retryAfter !== undefined ? 429 : 200);
  if (step.body !== undefined) return { status, body: step.body, headers };
  if (step.invalidJson) {
    // What a proxy or a truncated write looks like: starts as JSON, never finishes.
    return { status, body: '{"data":{"type":"createRunnerResponse","attributes":{"org_id":', headers };
  }
  if (step.wrongType || step.runnerIdWithColon) {
    const runnerId = step.runnerIdWithColon ? `${randomUUID()}:extra` : randomUUID();
    const body = successBody(ctx.orgId, runnerId) as { data: { type: string } };
    if (step.wrongType) body.data.type = 'createRunnerRequest';
    return { status, body, headers };
  }
  if (status >= 200 && status < 300) {
    // A success-looking body under an unexpected 2xx: only "exactly 200" may be accepted.
    if (status === 204) return { status, body: '', headers };
    const body = ctx.route === 'health' ? { status: 'ok' } : successBody(ctx.orgId, randomUUID());
    return { status, body, headers };
  }
  return { ...plainErrors(status), headers };
}

async function dropMidResponse(step: FaultStep, ctx: FaultContext, headers: Record<string, string>): Promise<void> {
  const { res, record } = ctx;
  const full = JSON.stringify(ctx.route === 'health' ? { status: 'ok' } : successBody(ctx.orgId, randomUUID()));
  record.status = step.status ?? 200;
  if (res.destroyed) return;
  // Content-Length promises the whole body, so the client cannot mistake the cut for an end.
  res.writeHead(record.status, {
    'Content-Type': 'application/json',
    ...headers,
    'Content-Length': String(Buffer.byteLength(full)),
  });
  const half = full.slice(0, Math.floor(full.length / 2));
  await new Promise<void>((resolve) => {
    res.write(half, () => {
      res.socket?.destroy();
      resolve();
    });
  });
}

async function streamOversize(size: number, status: number, ctx: FaultContext, headers: Record<string, string>): Promise<void> {
  const { res, record } = ctx;
  record.status = status;
  if (res.destroyed) return;
  // No Content-Length: a client that only checks the header would read it all.
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  const head = Buffer.from('{"data":{"type":"createRunnerResponse","attributes":{"padding":"');
  const tail = Buffer.from('"}}}');
  const framed = size >= head.length + tail.length;
  let remaining = size;
  if (framed) {
    res.write(head);
    remaining -= head.length + tail.length;
  }
  const chunk = Buffer.alloc(OVERSIZE_CHUNK, 'x');
  while (remaining > 0 && !res.destroyed) {
    const n = Math.min(remaining, chunk.length);
    remaining -= n;
    if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
      // Waits for the client: a client that stops reading (as it should) holds no memory here.
      const settled = new AbortController();
      const { signal } = settled;
      await Promise.race([once(res, 'drain', { signal }), once(res, 'close', { signal })]);
      settled.abort();
    }
  }
  if (res.destroyed) return;
  res.end(framed ? tail : undefined);
}
