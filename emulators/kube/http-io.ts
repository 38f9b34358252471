import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, failure } from './status-errors.js';

const MAX_BODY = 3 * 1024 * 1024;

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  contentType = 'application/json',
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(code, {
    ...headers,
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
  });
  res.end(text);
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY}`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
}

/**
 * JSON or YAML bodies only: the fake speaks no protobuf, which kubectl's typed `create` subcommands
 * send; they get the apiserver's 415 for an unknown format.
 */
export function parseBody(buf: Buffer, type: string): unknown {
  if (buf.length === 0) return undefined;
  if (!(type === 'application/json' || type.includes('yaml') || type.endsWith('+json'))) {
    throw failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
    );
  }
  const text = buf.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    if (type.includes('yaml')) return parseYaml(text);
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}
