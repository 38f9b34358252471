import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { selfSubjectAccessReview, selfSubjectReview, selfSubjectRulesReview } from './access-review.js';
import type { FaultController, FaultRequest } from './faults.js';
import { mediaType, parseBody, readBody, sendJson } from './http-io.js';
import { apiVersionOf, type KindInfo, type KindRegistry, keyOf } from './kinds.js';
import { checkFieldSelector, serveList, stripTypeMeta } from './list.js';
import { serveNonResource } from './non-resource.js';
import { applyPatch, PATCH_TYPES, type PatchType } from './patch.js';
import { Authorizer, forbiddenReason, type RequestAttributes, type UserInfo, X509_CREDENTIAL } from './rbac.js';
import type { DeleteOptions, Registry, WriteOptions } from './registry.js';
import { parseRequestInfo, type RequestInfo } from './request-info.js';
import { applyScale, toScale } from './scale.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { ApiError, badRequest, failure, forbidden, internalError, notFoundPath, unauthorized } from './status-errors.js';
import type { Store } from './store.js';
import type { ServiceAccountTokens } from './service-account-tokens.js';
import { createTokenRequest } from './token-request.js';
import type { KubeObject } from './types.js';
import { selects, serveWatch, type WatchHub, withTypeMeta } from './watch.js';

/** One request as the emulator saw it. Bodies are never recorded, so Secret data never lands here. */
export interface RecordedRequest extends FaultRequest {
  /** HTTP status answered (0 while still being handled). */
  status: number;
  at: number;
  /**
   * What authenticated it: a client certificate the client CA verified (checked first, as the
   * apiserver's x509 authenticator runs before the token one), a bearer token, basic auth (which the
   * apiserver no longer accepts: 401), or nothing.
   */
  credential: 'x509' | 'bearer' | 'basic' | 'none';
  /** The groups of `user` (after impersonation). */
  groups: string[];
  /** The TLS server name (SNI) the client asked for; '' when it sent none (an IP address) or over http. */
  serverName: string;
  /** The impersonation headers as they came, when there were any. */
  impersonate?: { user: string; groups: string[]; uid?: string; extra: Record<string, string[]> };
  /** The user name of a basic-auth header (never its password). */
  basicUser?: string;
}

export interface ServerContext {
  kinds: KindRegistry;
  store: Store;
  registry: Registry;
  authorizer: Authorizer;
  /** Tokens issued through serviceaccounts/{name}/token. */
  tokens: ServiceAccountTokens;
  faults: FaultController;
  hub: WatchHub;
  requests: RecordedRequest[];
  bookmarkIntervalMs: number;
  hostPort: () => string;
}

const PUBLIC_PATHS = new Set(['/version', '/version/', '/healthz', '/livez', '/readyz']);

function dryRunOf(values: string[]): boolean {
  for (const v of values) {
    if (v !== 'All') throw failure(400, 'BadRequest', `dryRun: Unsupported value: "${v}": supported values: "All"`);
  }
  return values.length > 0;
}

export function createRequestHandler(ctx: ServerContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(ctx, req, res).catch((err: unknown) => {
      const e = err instanceof ApiError ? err : internalError((err as Error)?.message ?? String(err));
      if (!res.headersSent) sendJson(res, e.code, e.status);
      else res.destroy();
    });
  };
}

async function handle(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://emulator.invalid');
  const method = (req.method ?? 'GET').toUpperCase();
  const ri = parseRequestInfo(method, url);
  const record: RecordedRequest = {
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    verb: ri.verb,
    resource: ri.resource,
    subresource: ri.subresource,
    namespace: ri.namespace,
    name: ri.name,
    user: '',
    status: 0,
    at: Date.now(),
    credential: 'none',
    groups: [],
    serverName: (req.socket as TLSSocket).encrypted ? (req.socket as TLSSocket).servername || '' : '',
  };
  const sentImpersonation = impersonationHeaders(req);
  if (sentImpersonation) record.impersonate = sentImpersonation;
  ctx.requests.push(record);
  const origWriteHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  (res as unknown as { writeHead: (...args: unknown[]) => ServerResponse }).writeHead = (...args: unknown[]) => {
    record.status = args[0] as number;
    return origWriteHead(...args);
  };

  const caller = authenticateRequest(ctx, req);
  record.credential = caller.via;
  if (caller.basicUser !== undefined) record.basicUser = caller.basicUser;
  const authz = caller.credential;
  const authenticated = caller.user;
  if (!authenticated && !PUBLIC_PATHS.has(url.pathname)) throw unauthorized();
  const user = authenticated && sentImpersonation ? impersonate(ctx, authenticated, authz, sentImpersonation) : authenticated;
  identities.set(req, { user, impersonated: user !== authenticated, credential: authz });
  record.user = user?.name ?? '';
  record.groups = user?.groups ?? [];

  const faultReq: FaultRequest = { ...record, user: record.user };
  const injected = await ctx.faults.apply(faultReq);
  if (injected?.afterApply) {
    // Serve (and apply) the request, but answer with the fault: the write happened, the client cannot tell.
    const realWriteHead = res.writeHead.bind(res);
    const realEnd = res.end.bind(res);
    res.writeHead = (() => res) as typeof res.writeHead;
    res.end = (() => {
      if (injected.afterApply === 'reset') res.socket?.destroy();
      else {
        const text = injected.raw ?? JSON.stringify(injected.body);
        realWriteHead(injected.code, {
          ...injected.headers,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(text),
        });
        realEnd(text);
      }
      return res;
    }) as typeof res.end;
  } else if (injected?.raw !== undefined) {
    res.writeHead(injected.code, {
      ...injected.headers,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(injected.raw),
    });
    res.end(injected.raw);
    return;
  } else if (injected) {
    sendJson(res, injected.code, injected.body, 'application/json', injected.headers);
    return;
  }

  if (!ri.resourceRequest) {
    if (user) authorizeOrThrow(ctx, authz, user, ri, undefined, req);
    serveNonResource(ctx, req, res, url);
    return;
  }
  const info = ctx.kinds.byGroupVersionResource(ri.apiGroup, ri.apiVersion, ri.resource);
  authorizeOrThrow(ctx, authz, user!, ri, info, req);
  if (!info) throw failure(404, 'NotFound', 'the server could not find the requested resource');
  if (ri.apiPrefix === 'api' && ri.apiGroup !== '') throw failure(404, 'NotFound', 'the server could not find the requested resource');
  await serveResource(ctx, req, res, url, ri, info);
}

/** Who a request acts as, after impersonation, and the credential it came with; read again by the access reviews. */
const identities = new WeakMap<IncomingMessage, { user: UserInfo | undefined; impersonated: boolean; credential: string | undefined }>();

interface Caller {
  via: RecordedRequest['credential'];
  user?: UserInfo;
  /** The key the authorizer knows the caller by: the bearer token, or `x509:<common name>`. */
  credential?: string;
  basicUser?: string;
}

const firstOf = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** The apiserver's authenticators in their order: client certificate (verified against the client CA), then bearer token. */
function authenticateRequest(ctx: ServerContext, req: IncomingMessage): Caller {
  const socket = req.socket as TLSSocket;
  if (socket.encrypted && socket.authorized) {
    const subject = socket.getPeerCertificate()?.subject as Record<string, string | string[]> | undefined;
    const name = firstOf(subject?.CN);
    if (name) {
      const orgs = subject?.O === undefined ? [] : ([] as string[]).concat(subject.O);
      return { via: 'x509', user: { name, groups: [...orgs, 'system:authenticated'] }, credential: `${X509_CREDENTIAL}${name}` };
    }
  }
  const header = req.headers.authorization ?? '';
  const token = Authorizer.tokenOf(header);
  if (token) {
    const user = ctx.authorizer.authenticate(header);
    return { via: 'bearer', ...(user ? { user } : {}), credential: token };
  }
  const basic = /^Basic\s+(\S+)$/i.exec(header);
  if (basic) return { via: 'basic', basicUser: Buffer.from(basic[1]!, 'base64').toString('utf8').split(':')[0] ?? '' };
  return { via: 'none' };
}

/** Impersonate-* headers as sent (kubectl --as, --as-group, --as-uid, --as-user-extra); undefined without Impersonate-User. */
function impersonationHeaders(req: IncomingMessage): RecordedRequest['impersonate'] {
  const user = req.headers['impersonate-user'];
  if (user === undefined) return undefined;
  const extra: Record<string, string[]> = {};
  for (const [header, values] of Object.entries(req.headersDistinct)) {
    if (!header.startsWith('impersonate-extra-') || !values) continue;
    // The key is percent-encoded in the header name (client-go headerKeyEscape); values may be comma-joined.
    extra[decodeURIComponent(header.slice('impersonate-extra-'.length))] = values.flatMap((v) => v.split(',').map((x) => x.trim()));
  }
  const uid = firstOf(req.headers['impersonate-uid']);
  return {
    user: String(user),
    groups: (req.headersDistinct['impersonate-group'] ?? []).flatMap((g) => g.split(',').map((x) => x.trim())).filter(Boolean),
    ...(uid !== undefined ? { uid } : {}),
    extra,
  };
}

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

/**
 * Impersonate-* (kubectl --as / --as-group / --as-uid / --as-user-extra): the caller needs the
 * `impersonate` verb on users (serviceaccounts for a service-account name), groups, uids and
 * userextras/<key>, as in the apiserver's impersonation filter; the request then runs as that user alone.
 */
function impersonate(
  ctx: ServerContext,
  real: UserInfo,
  credential: string | undefined,
  sent: NonNullable<RecordedRequest['impersonate']>,
): UserInfo {
  const { user: name, groups } = sent;
  const sa = SERVICE_ACCOUNT_USER.exec(name);
  const checks: Array<{ apiGroup: string; resource: string; subresource?: string; namespace: string; name: string }> = [
    sa
      ? { apiGroup: '', resource: 'serviceaccounts', namespace: sa[1]!, name: sa[2]! }
      : { apiGroup: '', resource: 'users', namespace: '', name },
    ...groups.map((g) => ({ apiGroup: '', resource: 'groups', namespace: '', name: g })),
    ...(sent.uid !== undefined ? [{ apiGroup: 'authentication.k8s.io', resource: 'uids', namespace: '', name: sent.uid }] : []),
    ...Object.entries(sent.extra).flatMap(([key, values]) =>
      values.map((v) => ({ apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: key, namespace: '', name: v })),
    ),
  ];
  for (const c of checks) {
    const attrs: RequestAttributes = {
      user: real,
      verb: 'impersonate',
      resourceRequest: true,
      path: '',
      apiGroup: c.apiGroup,
      resource: c.resource,
      subresource: c.subresource ?? '',
      namespace: c.namespace,
      name: c.name,
    };
    if (!ctx.authorizer.authorize(credential, attrs))
      throw forbidden({ group: c.apiGroup, plural: c.resource }, c.name, forbiddenReason(attrs));
  }
  const implied = sa ? ['system:serviceaccounts', `system:serviceaccounts:${sa[1]}`] : [];
  return { name, groups: [...new Set([...groups, ...implied, 'system:authenticated'])] };
}

function authorizeOrThrow(
  ctx: ServerContext,
  credential: string | undefined,
  user: UserInfo,
  ri: RequestInfo,
  info: KindInfo | undefined,
  req?: IncomingMessage,
): void {
  const attrs: RequestAttributes = {
    user,
    verb: ri.verb,
    resourceRequest: ri.resourceRequest,
    path: ri.path,
    apiGroup: ri.apiGroup,
    resource: ri.resource,
    subresource: ri.subresource,
    namespace: ri.namespace,
    name: ri.name,
  };
  if (ctx.authorizer.authorize(credential, attrs, req ? identities.get(req)?.impersonated : false)) return;
  const resource = ri.resourceRequest ? (info ?? { group: ri.apiGroup, plural: ri.resource }) : undefined;
  throw forbidden(resource, ri.name || undefined, forbiddenReason(attrs));
}

async function serveResource(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  ri: RequestInfo,
  info: KindInfo,
): Promise<void> {
  const q = url.searchParams;
  if (info.namespaced && !ri.namespace && ri.verb !== 'list' && ri.verb !== 'watch') throw notFoundPath();
  if (!info.namespaced && ri.namespace && !(info.kind === 'Namespace' && ri.name === ri.namespace)) throw notFoundPath();
  const namespace = info.namespaced ? ri.namespace || undefined : undefined;
  if (!info.stored) {
    await serveReview(ctx, req, res, info, ri);
    return;
  }
  if (ri.subresource === 'scale' && info.hasScale) {
    await serveScale(ctx, req, res, info, namespace, ri, dryRunOf(q.getAll('dryRun')));
    return;
  }
  if (ri.subresource === 'token' && info.kind === 'ServiceAccount') {
    if (ri.verb !== 'create') throw failure(405, 'MethodNotAllowed', NOT_ALLOWED);
    const body = parseBody(await readBody(req), mediaType(req));
    sendJson(res, 201, createTokenRequest(ctx, info, ri.namespace, ri.pathName, body));
    return;
  }
  if (ri.subresource && !(ri.subresource === 'status' && info.hasStatus)) throw notFoundPath();
  const name = ri.pathName;
  const dryRun = dryRunOf(q.getAll('dryRun'));

  switch (ri.verb) {
    case 'get': {
      if (!name) throw notFoundPath();
      // JSON only, never a Table (kubectl then prints its own columns): the fake serves what clients decode.
      sendJson(res, 200, withTypeMeta(info, ctx.registry.get(info, namespace, name)));
      return;
    }
    case 'list':
      return serveList(ctx.store, res, q, info, namespace);
    case 'watch': {
      const fields = parseFieldSelector(q.get('fieldSelector'));
      if (ri.verbViaPath && name) fields.push({ field: 'metadata.name', op: '=', value: name });
      checkFieldSelector(info, fields);
      const labels = parseLabelSelector(q.get('labelSelector'));
      const timeout = q.get('timeoutSeconds');
      serveWatch(
        ctx.store,
        ctx.hub,
        res,
        {
          info,
          namespace,
          labels,
          fields,
          resourceVersion: q.get('resourceVersion') ?? '',
          allowBookmarks: ['true', '1'].includes(q.get('allowWatchBookmarks') ?? ''),
          timeoutSeconds: timeout ? Number(timeout) : undefined,
          sendInitialEvents: ['true', '1'].includes(q.get('sendInitialEvents') ?? ''),
        },
        ctx.bookmarkIntervalMs,
      );
      return;
    }
    case 'create': {
      if (name) throw failure(405, 'MethodNotAllowed', NOT_ALLOWED);
      const body = parseBody(await readBody(req), mediaType(req));
      const created = ctx.registry.create(info, namespace, body, { dryRun, ...validationOpts(q, res) });
      sendJson(res, 201, withTypeMeta(info, created));
      return;
    }
    case 'update': {
      const body = parseBody(await readBody(req), mediaType(req));
      const updated = ctx.registry.update(info, namespace, name, body, { dryRun, subresource: ri.subresource, ...validationOpts(q, res) });
      sendJson(res, 200, withTypeMeta(info, updated));
      return;
    }
    case 'patch':
      return servePatch(ctx, req, res, info, namespace, name, ri.subresource, { dryRun, ...validationOpts(q, res) });
    case 'delete': {
      const opts = deleteOptions(parseBody(await readBody(req), mediaType(req)), q, dryRun);
      const result = ctx.registry.delete(info, namespace, name, opts);
      const body = result.body.kind === 'Status' ? result.body : withTypeMeta(info, result.body as KubeObject);
      sendJson(res, 200, body);
      return;
    }
    case 'deletecollection': {
      const opts = deleteOptions(parseBody(await readBody(req), mediaType(req)), q, dryRun);
      const fields = parseFieldSelector(q.get('fieldSelector'));
      checkFieldSelector(info, fields);
      const labels = parseLabelSelector(q.get('labelSelector'));
      const sel = { info, namespace, labels, fields };
      const deleted: Record<string, unknown>[] = [];
      for (const obj of ctx.store.list(keyOf(info), namespace)) {
        if (!selects(sel, obj)) continue;
        ctx.registry.delete(info, obj.metadata.namespace, obj.metadata.name!, { ...opts, preconditions: undefined });
        deleted.push(stripTypeMeta(withTypeMeta(info, obj)));
      }
      return sendJson(res, 200, {
        kind: `${info.kind}List`,
        apiVersion: apiVersionOf(info),
        metadata: { resourceVersion: String(ctx.store.currentRv) },
        items: deleted,
      });
    }
    default:
      throw failure(405, 'MethodNotAllowed', NOT_ALLOWED);
  }
}

const NOT_ALLOWED = 'the server does not allow this method on the requested resource';

async function serveReview(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, info: KindInfo, ri: RequestInfo): Promise<void> {
  if (ri.verb !== 'create' || ri.name) throw failure(405, 'MethodNotAllowed', NOT_ALLOWED);
  const body = parseBody(await readBody(req), mediaType(req));
  const {
    user,
    impersonated,
    credential: token,
  } = identities.get(req) as { user: UserInfo; impersonated: boolean; credential: string | undefined };
  const review =
    info.kind === 'SelfSubjectAccessReview'
      ? selfSubjectAccessReview(ctx.authorizer, token, user, body, impersonated)
      : info.kind === 'SelfSubjectRulesReview'
        ? selfSubjectRulesReview(ctx.authorizer, token, body, impersonated ? user : undefined)
        : selfSubjectReview(user);
  sendJson(res, 201, review);
}

async function serveScale(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  info: KindInfo,
  namespace: string | undefined,
  ri: RequestInfo,
  dryRun: boolean,
): Promise<void> {
  const current = ctx.registry.get(info, namespace, ri.pathName);
  if (ri.verb === 'get') {
    sendJson(res, 200, toScale(current));
    return;
  }
  if (ri.verb !== 'update' && ri.verb !== 'patch') throw failure(405, 'MethodNotAllowed', NOT_ALLOWED);
  const type = mediaType(req);
  let scale = parseBody(await readBody(req), type);
  if (ri.verb === 'patch') {
    if (!PATCH_TYPES.includes(type as PatchType)) throw unsupportedPatch();
    scale = applyPatch(type as PatchType, toScale(current), scale);
  }
  const next = applyScale(info, current, scale);
  const updated = ctx.registry.update(info, namespace, ri.pathName, next, { dryRun });
  sendJson(res, 200, toScale(updated));
}

function unsupportedPatch(): ApiError {
  return failure(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
  );
}

/** fieldValidation handling; without the parameter the apiserver warns (Warn is its default). */
function validationOpts(q: URLSearchParams, res: ServerResponse): { fieldValidation: string; warn: (m: string) => void } {
  const fieldValidation = q.get('fieldValidation') ?? 'Warn';
  if (!['Strict', 'Warn', 'Ignore'].includes(fieldValidation)) {
    throw badRequest(`fieldValidation: Unsupported value: "${fieldValidation}": supported values: "Ignore", "Strict", "Warn"`);
  }
  return {
    fieldValidation,
    warn: (m) => {
      if (!res.headersSent) res.appendHeader('Warning', `299 - ${JSON.stringify(m)}`);
    },
  };
}

function deleteOptions(body: unknown, q: URLSearchParams, dryRun: boolean): DeleteOptions {
  const opts: DeleteOptions = { dryRun };
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (Array.isArray(b['dryRun'])) opts.dryRun = opts.dryRun || dryRunOf(b['dryRun'] as string[]);
  const pre = (b['preconditions'] ?? {}) as Record<string, unknown>;
  const uid = (pre['uid'] as string | undefined) ?? q.get('preconditions.uid') ?? undefined;
  const rv = (pre['resourceVersion'] as string | undefined) ?? q.get('preconditions.resourceVersion') ?? undefined;
  if (uid || rv) opts.preconditions = { ...(uid ? { uid } : {}), ...(rv ? { resourceVersion: rv } : {}) };
  return opts;
}

async function servePatch(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  info: KindInfo,
  namespace: string | undefined,
  name: string,
  subresource: string,
  opts: WriteOptions,
): Promise<void> {
  const type = mediaType(req) as PatchType;
  if (!PATCH_TYPES.includes(type)) throw unsupportedPatch();
  const patch = parseBody(await readBody(req), type);
  if (patch === undefined) throw badRequest('the body of the request was empty');
  const existing = ctx.store.get(keyOf(info), namespace, name);
  if (!existing) {
    if (type === 'application/apply-patch+yaml' && !subresource) {
      const created = ctx.registry.create(info, namespace, patch, opts);
      sendJson(res, 201, withTypeMeta(info, created));
      return;
    }
    ctx.registry.get(info, namespace, name);
  }
  const patched = applyPatch(type, withTypeMeta(info, existing!), patch);
  const updated = ctx.registry.update(info, namespace, name, patched, { ...opts, subresource });
  sendJson(res, 200, withTypeMeta(info, updated));
}
