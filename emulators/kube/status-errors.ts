import type { KindInfo } from './kinds.js';

interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A failure that is answered with a metav1.Status body, as the apiserver's StatusError. */
export class ApiError extends Error {
  constructor(readonly status: Status) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
    this.name = 'ApiError';
  }
  get code(): number {
    return this.status.code;
  }
}

export function failure(code: number, reason: string | undefined, message: string, details?: StatusDetails): ApiError {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code };
  if (reason) status.reason = reason;
  if (details) status.details = details;
  return new ApiError(status);
}

type Resource = Pick<KindInfo, 'group' | 'plural'>;

function qualified(r: Resource): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}

/** The apiserver puts the resource (not the Kind) in details.kind for these, and omits an empty group. */
function resourceDetails(r: Resource, name: string | undefined): StatusDetails {
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (r.group) d.group = r.group;
  d.kind = r.plural;
  return d;
}

export function notFound(r: Resource, name: string): ApiError {
  return failure(404, 'NotFound', `${qualified(r)} "${name}" not found`, resourceDetails(r, name));
}

export function alreadyExists(r: Resource, name: string): ApiError {
  return failure(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, resourceDetails(r, name));
}

const OPTIMISTIC_LOCK_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(r: Resource, name: string, cause: string = OPTIMISTIC_LOCK_MESSAGE): ApiError {
  return failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${cause}`, resourceDetails(r, name));
}

/** metav1 Status for a validation failure; details.kind is the Kind here, unlike the resource-based errors. */
export function invalid(info: Pick<KindInfo, 'group' | 'kind'>, name: string, causes: FieldError[]): ApiError {
  const list = causes.map((c) => c.text());
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  const details: StatusDetails = { name };
  if (info.group) details.group = info.group;
  details.kind = info.kind;
  details.causes = causes.map((c) => ({ reason: c.reason, message: c.detailText(), field: c.field }));
  // errors.NewInvalid names the GroupKind: "Secret", but "DaemonSet.apps".
  const qualifiedKind = info.group ? `${info.kind}.${info.group}` : info.kind;
  return failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, details);
}

export function badRequest(message: string): ApiError {
  return failure(400, 'BadRequest', message);
}

export function unauthorized(): ApiError {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

export function forbidden(r: Resource | undefined, name: string | undefined, reason: string): ApiError {
  if (!r) return failure(403, 'Forbidden', `forbidden: ${reason}`, {});
  const subject = name ? `${qualified(r)} "${name}"` : qualified(r);
  return failure(403, 'Forbidden', `${subject} is forbidden: ${reason}`, resourceDetails(r, name));
}

export function expired(message: string): ApiError {
  return failure(410, 'Expired', message);
}

export function internalError(message: string): ApiError {
  return failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return failure(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

export function statusSuccess(details: StatusDetails): Status & { status: 'Success' } {
  // The apiserver omits code on a Success Status returned from DELETE.
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details } as Status & {
    status: 'Success';
  };
}

/** One field.Error, rendered like apimachinery's field.Error.Error(). */
export class FieldError {
  constructor(
    readonly reason: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueNotSupported' | 'FieldValueTooLong',
    readonly field: string,
    readonly detail: string,
    readonly badValue?: unknown,
  ) {}

  private typeText(): string {
    switch (this.reason) {
      case 'FieldValueRequired':
        return 'Required value';
      case 'FieldValueInvalid':
        return 'Invalid value';
      case 'FieldValueForbidden':
        return 'Forbidden';
      case 'FieldValueNotSupported':
        return 'Unsupported value';
      case 'FieldValueTooLong':
        return 'Too long';
    }
  }

  detailText(): string {
    const value =
      this.badValue === undefined ? '' : `: ${typeof this.badValue === 'string' ? JSON.stringify(this.badValue) : String(this.badValue)}`;
    const detail = this.detail ? `: ${this.detail}` : '';
    return `${this.typeText()}${value}${detail}`;
  }

  text(): string {
    return `${this.field}: ${this.detailText()}`;
  }
}

/** The apiserver's answer for a path no resource is served at. */
export function notFoundPath(): ApiError {
  return failure(404, 'NotFound', 'the server could not find the requested resource');
}
