import type { ServerResponse } from 'node:http';
import { sendJson } from './http-io.js';
import { apiVersionOf, type KindInfo, keyOf } from './kinds.js';
import { type FieldRequirement, parseFieldSelector, parseLabelSelector } from './selectors.js';
import { badRequest, expired, failure, tooLargeResourceVersion } from './status-errors.js';
import type { Store } from './store.js';
import type { KubeObject } from './types.js';
import { selects, withTypeMeta } from './watch.js';

export function checkFieldSelector(info: KindInfo, reqs: FieldRequirement[]): void {
  const known = new Set(['metadata.name', ...(info.namespaced ? ['metadata.namespace'] : []), ...Object.keys(info.fieldLabels)]);
  for (const r of reqs) {
    if (!known.has(r.field)) throw badRequest(`field label not supported: ${r.field}`);
  }
}

export function stripTypeMeta(obj: KubeObject): Record<string, unknown> {
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = obj;
  return rest;
}

interface ContinueToken {
  rv: number;
  start: string;
}

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: t.rv, start: t.start })).toString('base64');
}

function decodeContinue(s: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
    if (typeof t.rv === 'number' && typeof t.start === 'string') return { rv: t.rv, start: t.start };
  } catch {
    // fall through to the apiserver's message for a malformed token
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

export function serveList(store: Store, res: ServerResponse, q: URLSearchParams, info: KindInfo, namespace: string | undefined): void {
  const fields = parseFieldSelector(q.get('fieldSelector'));
  checkFieldSelector(info, fields);
  const labels = parseLabelSelector(q.get('labelSelector'));
  const current = store.currentRv;
  const rvParam = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const cont = q.get('continue');
  let atRv = current;
  let start = '';
  if (cont) {
    if (rvParam) throw badRequest('specifying resource version is not allowed when using continue');
    const token = decodeContinue(cont);
    atRv = token.rv;
    start = token.start;
  } else if (rvParam !== '' && rvParam !== '0') {
    if (!/^\d+$/.test(rvParam)) throw badRequest(`invalid resource version: ${rvParam}`);
    const n = Number(rvParam);
    if (match === 'Exact') atRv = n;
    else if (n > current) throw tooLargeResourceVersion(n, current);
  } else if (match === 'Exact') {
    throw failure(422, 'Invalid', 'resourceVersionMatch "Exact" is forbidden for resourceVersion "0"');
  }
  const all = store.stateAt(keyOf(info), atRv);
  if (!all) {
    if (cont) {
      throw expired(
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
      );
    }
    throw expired(`too old resource version: ${atRv} (${store.oldestResumableRv})`);
  }
  const sel = { info, namespace, labels, fields };
  let items = all.filter((o) => selects(sel, o) && (!start || `${o.metadata.namespace ?? ''}/${o.metadata.name}` > start));
  const limit = Number(q.get('limit') ?? 0);
  const metadata: Record<string, unknown> = { resourceVersion: String(atRv) };
  if (limit > 0 && items.length > limit) {
    const last = items[limit - 1]!;
    metadata['continue'] = encodeContinue({ rv: atRv, start: `${last.metadata.namespace ?? ''}/${last.metadata.name}` });
    metadata['remainingItemCount'] = items.length - limit;
    items = items.slice(0, limit);
  }
  sendJson(res, 200, {
    kind: `${info.kind}List`,
    apiVersion: apiVersionOf(info),
    metadata,
    items: items.map((o) => stripTypeMeta(withTypeMeta(info, o))),
  });
}
