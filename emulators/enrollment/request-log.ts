/**
 * What the emulator received, kept verbatim so tests can assert on what our client really sent
 * (e.g. that the API key never reached the redirect destination, that retries reused one public key).
 */
import type { IncomingMessage } from 'node:http';
import type { Route } from './routes.js';

export type ListenerName = 'main' | 'other';

export interface RecordedRequest {
  /** Position in the log since start (not reset by reset()), so logs fetched in pieces can be joined. */
  seq: number;
  listener: ListenerName;
  method: string;
  /** Path without the query string, exactly as sent (not decoded). */
  path: string;
  /** Query parameters; a repeated parameter keeps its first value here and all values in rawQuery. */
  query: Record<string, string>;
  rawQuery: string;
  /** Header names lower-cased, values as received; repeated headers are joined with ", ". */
  headers: Record<string, string>;
  /** Name/value pairs in arrival order with the client's own spelling and every repetition. */
  rawHeaders: [string, string][];
  /** Request body as UTF-8 text, cut at MAX_REQUEST_BODY_BYTES. */
  body: string;
  /** Bytes received in the body, including any beyond the recorded cut. */
  bodyBytes: number;
  /** Epoch milliseconds when the request line arrived. */
  time: number;
  /** Which emulated API route matched, or null for an unknown path. */
  route: Route | null;
  /** Status line sent, or null while pending / when the connection was dropped before a status. */
  status: number | null;
  /** Why the request was rejected, or which scripted fault answered it. */
  detail: string | null;
  /** The scripted fault step that answered this request, if any. */
  fault: string | null;
}

export class RequestLog {
  readonly entries: RecordedRequest[] = [];
  #seq = 0;

  open(req: IncomingMessage, listener: ListenerName, route: Route | null, time: number): RecordedRequest {
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) {
      if (!(k in query)) query[k] = v;
    }
    const rawHeaders: [string, string][] = [];
    const headers: Record<string, string> = {};
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      const value = req.rawHeaders[i + 1]!;
      rawHeaders.push([name, value]);
      const lower = name.toLowerCase();
      headers[lower] = lower in headers ? `${headers[lower]}, ${value}` : value;
    }
    const entry: RecordedRequest = {
      seq: this.#seq++,
      listener,
      method: req.method ?? '',
      path: q === -1 ? rawUrl : rawUrl.slice(0, q),
      query,
      rawQuery: q === -1 ? '' : rawUrl.slice(q + 1),
      headers,
      rawHeaders,
      body: '',
      bodyBytes: 0,
      time,
      route,
      status: null,
      detail: null,
      fault: null,
    };
    this.entries.push(entry);
    return entry;
  }

  clear(): void {
    // Cleared in place: callers may hold the array from emulator.requests.
    this.entries.length = 0;
  }
}
