import { exactName, parseFieldSelector } from './selectors.js';

/** What the apiserver's RequestInfoFactory derives from a request line; drives routing and authorization alike. */
export interface RequestInfo {
  resourceRequest: boolean;
  path: string;
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** Name that came from the URL path, not from a metadata.name field selector. */
  pathName: string;
  /** Verb given by the deprecated /watch/ path prefix. */
  verbViaPath: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const PATH_SEGMENT_INVALID = /[/%]|^\.\.?$/;

function isWatchParam(v: string | null): boolean {
  if (v === null) return false;
  const s = v.toLowerCase();
  return s !== 'false' && s !== '0';
}

export function parseRequestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const info: RequestInfo = {
    resourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    pathName: '',
    verbViaPath: false,
  };
  let parts = path
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .filter((p) => p !== '')
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        // Malformed escapes stay as typed; they simply match no resource.
        return p;
      }
    });
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return info;
  info.apiPrefix = parts[0]!;
  parts = parts.slice(1);
  if (info.apiPrefix === 'apis') {
    if (parts.length < 3) return info;
    info.apiGroup = parts[0]!;
    parts = parts.slice(1);
  }
  info.resourceRequest = true;
  info.apiVersion = parts[0]!;
  parts = parts.slice(1);
  if (parts[0] === 'watch' || parts[0] === 'proxy') {
    info.verb = parts[0];
    info.verbViaPath = true;
    parts = parts.slice(1);
  } else {
    const byMethod: Record<string, string> = {
      POST: 'create',
      GET: 'get',
      HEAD: 'get',
      PUT: 'update',
      PATCH: 'patch',
      DELETE: 'delete',
    };
    info.verb = byMethod[method.toUpperCase()] ?? '';
  }
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      info.namespace = parts[1]!;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
    }
  }
  if (parts.length >= 3 && info.verb !== 'proxy') info.subresource = parts[2]!;
  if (parts.length >= 2) info.name = parts[1]!;
  if (parts.length >= 1) info.resource = parts[0]!;
  info.pathName = info.name;
  if (!info.name && info.verb === 'get') {
    info.verb = isWatchParam(url.searchParams.get('watch')) ? 'watch' : 'list';
    try {
      const name = exactName(parseFieldSelector(url.searchParams.get('fieldSelector')));
      if (name !== undefined && !PATH_SEGMENT_INVALID.test(name)) info.name = name;
    } catch {
      // A selector that does not parse gives no name; the handler reports the parse error.
    }
  }
  if (!info.name && info.verb === 'delete') info.verb = 'deletecollection';
  return info;
}
