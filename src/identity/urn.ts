import { IdentityDecodeError } from '../errors.js';
import { hasUnprintable } from '../sanitize.js';

// urn:dd:apps:on-prem-runner:<region>:<orgId>:<runnerId> (protocol §1). The Go agent splits on ':'
// and wants exactly 7 parts with an int64 org id; we also pin the fixed prefix.

const PREFIX = ['urn', 'dd', 'apps', 'on-prem-runner'] as const;
const INT64_MAX = 9223372036854775807n;

export interface RunnerUrn {
  region: string;
  orgId: number;
  runnerId: string;
}

export function buildUrn(parts: RunnerUrn): string {
  if (!parts.region || parts.region.includes(':')) throw new IdentityDecodeError('urn', 'region is empty or contains ":"');
  if (!Number.isSafeInteger(parts.orgId) || parts.orgId < 0) throw new IdentityDecodeError('urn', 'org id is not a non-negative integer');
  checkRunnerId(parts.runnerId);
  return `${PREFIX.join(':')}:${parts.region}:${parts.orgId}:${parts.runnerId}`;
}


export function checkRunnerId(runnerId: string): void {
  if (runnerId === '') throw new IdentityDecodeError('runner_id', 'is empty');
  if (runnerId.includes(':')) throw new IdentityDecodeError('runner_id', 'contains ":", which breaks the URN the Go agent parses');
  // Control, escape and bidi-formatting characters: a server-chosen id with these could rewrite a terminal or a log.
  if (hasUnprintable(runnerId)) throw new IdentityDecodeError('runner_id', 'contains control or formatting characters (not printed)');
  if (runnerId.length > 256) throw new IdentityDecodeError('runner_id', `is ${runnerId.length} characters long (at most 256)`);
}

export function parseUrn(urn: string): RunnerUrn {
  const parts = urn.split(':');
  if (parts.length !== 7) throw new IdentityDecodeError('urn', `has ${parts.length} ':'-separated parts, expected 7`);
  PREFIX.forEach((expected, i) => {
    if (parts[i] !== expected) throw new IdentityDecodeError('urn', `does not start with ${PREFIX.join(':')}:`);
  });
  const [, , , , region, org, runnerId] = parts as [string, string, string, string, string, string, string];
  if (region === '') throw new IdentityDecodeError('urn', 'region is empty');
  if (!/^-?\d+$/.test(org) || BigInt(org) > INT64_MAX || BigInt(org) < -INT64_MAX - 1n) {
    throw new IdentityDecodeError('urn', 'org id is not a base-10 int64');
  }
  if (runnerId === '') throw new IdentityDecodeError('urn', 'runner id is empty');
  if (hasUnprintable(urn)) throw new IdentityDecodeError('urn', 'contains control or formatting characters (not printed)');
  return { region, orgId: Number(org), runnerId };
}

/** Region the Go agent derives from the site (PAR/adapters/regions). */
export function regionFromSite(site: string): string {
  const host = site.trim().toLowerCase().replace(/\.$/, '');
  if (host === 'datadoghq.eu') return 'eu1';
  const match = /^([^.]+)\.datadoghq\.com$/.exec(host);
  if (match) return match[1]!;
  return 'us1';
}
