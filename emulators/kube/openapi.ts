import { createHash } from 'node:crypto';
import type { KindInfo, KindRegistry } from './kinds.js';
import { SERVER_VERSION } from './discovery.js';

/**
 * Just enough OpenAPI v3 for kubectl: with its default --validate=strict it looks for the
 * fieldValidation query parameter on the PATCH operation of the object's GVK; finding it, kubectl
 * leaves validation to the server and skips client-side schema checks. Without /openapi/v3 (and
 * /openapi/v2) `kubectl create -f` fails with "failed to download openapi". No schemas are served.
 */
function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

function queryParam(name: string) {
  return { name, in: 'query', schema: { type: 'string', uniqueItems: true } };
}

function itemPath(info: KindInfo): string {
  const base = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
  return info.namespaced ? `${base}/namespaces/{namespace}/${info.plural}/{name}` : `${base}/${info.plural}/{name}`;
}

export function openApiV3Document(kinds: KindRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const infos = kinds.all().filter((k) => k.group === group && k.version === version);
  if (infos.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  for (const info of infos) {
    const gvk = { group: info.group, version: info.version, kind: info.kind };
    const params = [queryParam('dryRun'), queryParam('fieldManager'), queryParam('fieldValidation'), queryParam('force')];
    const op = (action: string, verb: string) => ({
      operationId: `${action}${info.kind}`,
      parameters: params,
      responses: { '200': { description: 'OK' } },
      'x-kubernetes-action': verb,
      'x-kubernetes-group-version-kind': gvk,
    });
    paths[itemPath(info)] = {
      get: op('read', 'get'),
      put: op('replace', 'put'),
      patch: op('patch', 'patch'),
      delete: op('delete', 'delete'),
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
    paths,
    components: { schemas: {} },
  };
}

function hashOf(doc: unknown): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase().slice(0, 128);
}

export function openApiV3Root(kinds: KindRegistry): Record<string, unknown> {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const { group, version } of kinds.groupVersions()) {
    const p = gvPath(group, version);
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hashOf(openApiV3Document(kinds, group, version))}` };
  }
  return { paths };
}

/** `/openapi/v3/api/v1` → ['', 'v1']; `/openapi/v3/apis/apps/v1` → ['apps', 'v1']. */
export function groupVersionOfPath(path: string): { group: string; version: string } | undefined {
  const m = /^\/openapi\/v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))\/?$/.exec(path);
  if (!m) return undefined;
  return m[1] ? { group: '', version: m[1] } : { group: m[2]!, version: m[3]! };
}
