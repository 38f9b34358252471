import type { Readable } from 'node:stream';
import { KubernetesError } from '../errors.js';
import { effectiveTimeout, KubeRequestTimeout, type RequestLimits } from '../kube/kube-clients.js';
import { readBoundedBody } from '../http-body.js';
import type { SecretRef } from '../kube/identity-secret.js';
import { KubeApiStatus, type StatusBody } from '../kube/kube-errors.js';
import { MAX_ERROR_BODY_BYTES, type KubeTransport } from '../kube/kube-transport.js';
import { sanitizeServerString } from '../sanitize.js';

// One watch request on the identity Secret through the cluster's transport (kube-transport.ts), reading the stream
// itself: client-node's Watch drops non-JSON lines silently and hands anything else to its ListWatch,
// where a malformed event threw inside an async handler (an unhandled rejection that killed the
// process). Here every line is checked first: an event for another Secret is ignored, anything
// malformed (not JSON, unknown type, another kind, missing fields) or an ERROR other than 410
// ends the stream with an error, so the supervisor restarts the informer with backoff and the
// current identity stays.

export type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => unknown;
export type WatchDone = (err: unknown) => unknown;

interface StrictWatchHooks {
  /** An event for another object than ref (name or namespace): not applied. */
  ignored(reason: string): void;
  /** The watch request was answered 200: the stream is open. */
  opened?(): void;
}

const TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);
/**
 * The longest event line read: a Secret is at most 1 MiB of data (etcd's default request limit is
 * 1.5 MiB), base64 makes it 4/3 of that, and the rest of the object is small.
 */
const MAX_WATCH_EVENT_BYTES = 16 * 1024 * 1024;

function malformedEvent(ref: SecretRef, what: string): KubernetesError {
  return new KubernetesError(
    'WATCH_MALFORMED',
    `watching Secret ${ref.namespace}/${ref.name}: the API server sent ${what}`,
    'The event was not applied and the current identity is kept; the watch restarts with backoff.',
  );
}

type Verdict = { action: 'pass' } | { action: 'ignore'; reason: string } | { action: 'fail'; error: unknown };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What to do with one decoded line of the watch stream. */
function checkWatchEvent(ref: SecretRef, event: unknown): Verdict {
  const fail = (what: string): Verdict => ({ action: 'fail', error: malformedEvent(ref, what) });
  if (!isObject(event)) return fail('a watch event that is not an object');
  const { type, object } = event;
  if (typeof type !== 'string') return fail('a watch event without a type');
  if (!TYPES.has(type)) return fail(`a watch event of unknown type "${sanitizeServerString(type, 40)}"`);
  if (!isObject(object)) return fail(`a ${type} event without an object`);
  if (type === 'ERROR') {
    // 410 Expired: ListWatch forgets its resourceVersion and re-lists when the stream ends.
    if (object.code === 410) return { action: 'pass' };
    const code = typeof object.code === 'number' ? object.code : 500;
    return { action: 'fail', error: new KubeApiStatus(code, object as StatusBody) };
  }
  const metadata = object.metadata;
  if (!isObject(metadata) || typeof metadata.resourceVersion !== 'string' || metadata.resourceVersion === '')
    return fail(`a ${type} event without metadata.resourceVersion`);
  if (type === 'BOOKMARK') return { action: 'pass' };
  if (object.kind !== 'Secret')
    return fail(
      `a ${type} event for a ${typeof object.kind === 'string' ? sanitizeServerString(object.kind, 40) : 'object without kind'} instead of a Secret`,
    );
  if (typeof metadata.name !== 'string') return fail(`a ${type} event without metadata.name`);
  if (metadata.name !== ref.name || (metadata.namespace !== undefined && metadata.namespace !== ref.namespace)) {
    return {
      action: 'ignore',
      reason: `a ${type} event for another Secret (${sanitizeServerString(metadata.namespace ?? '?', 63)}/${sanitizeServerString(metadata.name, 253)})`,
    };
  }
  if (object.data !== undefined && !isObject(object.data)) return fail(`a ${type} event whose data is not a map`);
  return { action: 'pass' };
}

/**
 * The stream's lines as readline gives them with crlfDelay: Infinity (split at \n, \r\n or a lone
 * \r; a last line without a newline comes at the end), then `onEnd`. Not readline itself: its
 * modules are half a MiB of an idle watcher's memory, for a split on newlines. A line longer than
 * `maxLine` characters is not kept: `onTooLong` is called instead and the stream is left alone.
 */
// exported for tests: line splitting and the line cap, checked on streams
export function readLines(
  stream: Readable,
  onLine: (line: string) => void,
  onEnd: () => void,
  maxLine = Number.POSITIVE_INFINITY,
  onTooLong: () => void = () => undefined,
): void {
  let pending = '';
  let sawReturn = false;
  let tooLong = false;
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    if (tooLong) return;
    // A \r\n split across two chunks is one line break.
    const text = sawReturn && chunk.startsWith('\n') ? chunk.slice(1) : chunk;
    sawReturn = false;
    const breaks = /\r\n|\n|\r/g;
    let start = 0;
    for (let m = breaks.exec(text); m; m = breaks.exec(text)) {
      const line = pending + text.slice(start, m.index);
      pending = '';
      start = m.index + m[0].length;
      if (m[0] === '\r' && start === text.length) sawReturn = true;
      if (line.length > maxLine) {
        tooLong = true;
        onTooLong();
        return;
      }
      onLine(line);
    }
    pending += text.slice(start);
    if (pending.length > maxLine) {
      tooLong = true;
      pending = '';
      onTooLong();
    }
  });
  stream.once('end', () => {
    if (tooLong) return;
    if (pending !== '') onLine(pending);
    pending = '';
    onEnd();
  });
}

/** Calls a handler that may be async, sending a throw or a rejection to `onError` instead of the process. */
function guarded(fn: () => unknown, onError: (err: unknown) => void): void {
  try {
    const r = fn();
    if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(undefined, onError);
  } catch (err) {
    onError(err);
  }
}

/**
 * The Watch.watch() contract of client-node's ListWatch (kept by secret-informer.ts): resolves with an
 * AbortController once the request is under way; `done` is called exactly once, unless the caller aborted.
 */
export async function strictWatch(
  transport: KubeTransport,
  ref: SecretRef,
  limits: RequestLimits,
  hooks: StrictWatchHooks,
  path: string,
  query: Record<string, string | boolean | undefined>,
  callback: WatchCallback,
  done: WatchDone,
): Promise<AbortController> {
  const controller = new AbortController();
  let finished = false;
  let selfAborted = false;
  const abortSelf = (reason?: unknown): void => {
    selfAborted = true;
    controller.abort(reason);
  };
  const finish = (err: unknown): void => {
    if (finished) return;
    finished = true;
    // An abort from the caller (ListWatch.stop, or its own restart) needs no answer.
    if (controller.signal.aborted && !selfAborted) return;
    if (!controller.signal.aborted) abortSelf();
    guarded(
      () => done(err),
      () => undefined,
    );
  };
  // The per-request timeout covers the wait for the answer's headers (not an exec plugin's run, which
  // has its own limit); the stream itself may then be quiet for long.
  let connectTimer: NodeJS.Timeout | undefined;
  const run = async () => {
    const credentials = await transport.credentials();
    controller.signal.throwIfAborted();
    const { ms, limitedBy } = effectiveTimeout(limits);
    connectTimer = setTimeout(() => abortSelf(new KubeRequestTimeout(ms, limitedBy)), ms);
    connectTimer.unref();
    const response = await transport.send(
      { method: 'GET', path, query: { watch: 'true', ...query }, headers: { Accept: 'application/json' }, signal: controller.signal },
      credentials,
    );
    clearTimeout(connectTimer);
    const status = response.statusCode ?? 0;
    if (status !== 200) {
      const text = await readBoundedBody(response, MAX_ERROR_BODY_BYTES).then(String, () => '');
      throw KubeApiStatus.from(status, text, response.headers['retry-after']);
    }
    hooks.opened?.();
    // The body's errors (our own abort included) need a listener, or they would kill the process.
    response.on('error', finish);
    // Closed without its end (nor an error): the stream is over all the same.
    response.on('close', () => finish(new Error('the watch stream closed before its end')));
    readLines(
      response,
      (line: string) => {
        if (finished || line.trim() === '') return;
        let event: unknown;
        try {
          event = JSON.parse(line);
        } catch {
          finish(malformedEvent(ref, `a line that is not JSON (${line.length} characters)`));
          return;
        }
        const verdict = checkWatchEvent(ref, event);
        if (verdict.action === 'fail') finish(verdict.error);
        else if (verdict.action === 'ignore') hooks.ignored(verdict.reason);
        else {
          const e = event as { type: string; object: unknown };
          guarded(
            () => callback(e.type, e.object, e),
            (err) => finish(err),
          );
        }
      },
      () => finish(null),
      MAX_WATCH_EVENT_BYTES,
      () => finish(malformedEvent(ref, `an event longer than ${MAX_WATCH_EVENT_BYTES / 1024 / 1024} MiB`)),
    );
  };
  run().catch((err: unknown) => {
    clearTimeout(connectTimer);
    // Aborted by our own connect timer: report the timeout, not the abort.
    const reason = controller.signal.reason;
    finish(reason instanceof KubeRequestTimeout ? reason : err);
  });
  return controller;
}
