import type { IncomingMessage, ServerResponse } from 'node:http';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions, SERVER_VERSION, wantsAggregated } from './discovery.js';
import { sendJson } from './http-io.js';
import { groupVersionOfPath, openApiV3Document, openApiV3Root } from './openapi.js';
import type { ServerContext } from './server.js';
import { notFoundPath } from './status-errors.js';

/** Version, health, discovery and OpenAPI: the paths outside /api/v1/... and /apis/g/v/... resources. */
export function serveNonResource(
  ctx: Pick<ServerContext, 'kinds' | 'hostPort'>,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): void {
  const p = url.pathname.replace(/\/+$/, '') || '/';
  const accept = req.headers.accept;
  if (p === '/version') {
    sendJson(res, 200, SERVER_VERSION);
    return;
  }
  if (p === '/healthz' || p === '/livez' || p === '/readyz') {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('ok');
    return;
  }
  if (p === '/api' || p === '/apis') {
    const aggregated = wantsAggregated(accept);
    if (aggregated) {
      const version = aggregated.includes('v=v2beta1') ? 'apidiscovery.k8s.io/v2beta1' : 'apidiscovery.k8s.io/v2';
      sendJson(res, 200, aggregatedDiscovery(ctx.kinds, p === '/api', version), aggregated);
      return;
    }
    sendJson(res, 200, p === '/api' ? apiVersions(ctx.hostPort()) : apiGroupList(ctx.kinds));
    return;
  }
  if (p === '/openapi/v3') {
    sendJson(res, 200, openApiV3Root(ctx.kinds));
    return;
  }
  const gv = groupVersionOfPath(p);
  if (gv) {
    const doc = openApiV3Document(ctx.kinds, gv.group, gv.version);
    if (doc) {
      sendJson(res, 200, doc);
      return;
    }
  }
  const parts = p.split('/').filter(Boolean);
  if (parts[0] === 'api' && parts.length === 2) {
    const list = apiResourceList(ctx.kinds, '', parts[1]!);
    if (list) {
      sendJson(res, 200, list);
      return;
    }
  }
  if (parts[0] === 'apis' && parts.length === 2) {
    const group = apiGroup(ctx.kinds, parts[1]!);
    if (group) {
      sendJson(res, 200, group);
      return;
    }
  }
  if (parts[0] === 'apis' && parts.length === 3) {
    const list = apiResourceList(ctx.kinds, parts[1]!, parts[2]!);
    if (list) {
      sendJson(res, 200, list);
      return;
    }
  }
  throw notFoundPath();
}
