/** The one place responses are written, so every status sent ends up in the request log. */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { RecordedRequest } from './request-log.js';
import type { ValidationError } from './validate-request.js';

export interface Reply {
  status: number;
  /** Serialized with JSON.stringify unless already a string. */
  body: unknown;
  headers?: Record<string, string>;
  /** Why: stored in the request log, never sent. */
  detail?: string;
}

export function send(res: ServerResponse, record: RecordedRequest | null, reply: Reply): void {
  if (record) {
    record.status = reply.status;
    if (reply.detail !== undefined) record.detail = reply.detail;
  }
  if (res.headersSent || res.destroyed) return;
  const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  const payload = Buffer.from(text, 'utf8');
  res.writeHead(reply.status, {
    'Content-Type': 'application/json',
    ...reply.headers,
    'Content-Length': String(payload.length),
  });
  res.end(payload);
}

/** Datadog's bare form, used for authentication failures: {"errors":["Unauthorized"]}. */
export function plainErrors(status: number, detail?: string): Reply {
  return { status, body: { errors: [STATUS_CODES[status] ?? `Error ${status}`] }, ...(detail ? { detail } : {}) };
}

/** JSON:API error objects, used where a client needs to know which field was wrong. */
export function jsonApiErrors(status: number, errors: ValidationError[]): Reply {
  const title = STATUS_CODES[status] ?? `Error ${status}`;
  return {
    status,
    body: {
      errors: errors.map((e) => ({
        status: String(status),
        title,
        detail: e.detail,
        ...(e.pointer !== undefined ? { source: { pointer: e.pointer } } : {}),
        ...(e.header !== undefined ? { source: { header: e.header } } : {}),
      })),
    },
    detail: errors.map((e) => e.detail).join('; '),
  };
}
