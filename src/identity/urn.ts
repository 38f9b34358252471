import { IdentityDecodeError } from '../errors.js';
import { hasUnprintable } from '../sanitize.js';

// urn:dd:apps:on-prem-runner:<region>:<orgId>:<runnerId> (docs/protocol.md §1). The Go agent splits on ':'
// and wants exactly 7 parts with an int64 org id; we also pin the fixed prefix.

const PREFIX = ['urn', 'dd', 'apps', 'on-prem-runner'] as const;
const INT64_MAX = 9223372036854775807n;

// Bounds on what is read back (docs/security.md, bounds table): the region is one DNS label of the site
// (at most 63 characters), the org id an int64 (at most 20 characters with its sign), and the runner id
// at most what enrollment accepts. A longer URN was not made by Datadog, and would end up in argv, the
// environment of a supervised runner and every log line.
const MAX_REGION_LENGTH = 63;
const MAX_RUNNER_ID_LENGTH = 256;
const MAX_ORG_LENGTH = 20;
const MAX_URN_LENGTH = `${PREFIX.join(':')}:`.length + MAX_REGION_LENGTH + 1 + MAX_ORG_LENGTH + 1 + MAX_RUNNER_ID_LENGTH;

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
  if (runnerId.length > MAX_RUNNER_ID_LENGTH)
    throw new IdentityDecodeError('runner_id', `is ${runnerId.length} characters long (at most ${MAX_RUNNER_ID_LENGTH})`);
}

export function parseUrn(urn: string): RunnerUrn {
  // The length first: nothing below should run over (or quote) a string of any size.
  if (urn.length > MAX_URN_LENGTH)
    throw new IdentityDecodeError('urn', `is ${urn.length} characters long (at most ${MAX_URN_LENGTH}); not printed`);
  const parts = urn.split(':');
  if (parts.length !== 7) throw new IdentityDecodeError('urn', `has ${parts.length} ':'-separated parts, expected 7`);
  PREFIX.forEach((expected, i) => {
    if (parts[i] !== expected) throw new IdentityDecodeError('urn', `does not start with ${PREFIX.join(':')}:`);
  });
  const [, , , , region, org, runnerId] = parts as [string, string, string, string, string, string, string];
  if (region === '') throw new IdentityDecodeError('urn', 'region is empty');
  if (region.length > MAX_REGION_LENGTH)
    throw new IdentityDecodeError('urn', `region is ${region.length} characters long (at most ${MAX_REGION_LENGTH})`);
  if (!/^-?\d+$/.test(org) || BigInt(org) > INT64_MAX || BigInt(org) < -INT64_MAX - 1n) {
    throw new IdentityDecodeError('urn', 'org id is not a base-10 int64');
  }
  if (runnerId === '') throw new IdentityDecodeError('urn', 'runner id is empty');
  if (runnerId.length > MAX_RUNNER_ID_LENGTH)
    throw new IdentityDecodeError('urn', `runner id is ${runnerId.length} characters long (at most ${MAX_RUNNER_ID_LENGTH})`);
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
