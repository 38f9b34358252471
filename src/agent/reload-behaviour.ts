// What a running cluster agent does when its identity Secret changes, by its version
// (docs/protocol.md §6d). The restart advice (`next:`, restartHint) and `status --pods` follow it:
// a restart where the agent does not reload, none where it does, and both possibilities said where
// the version is unknown. Pure: no I/O, no printing.

type ReloadKind = 'urn-change' | 'none' | 'unknown';

export interface ReloadBehaviour {
  /** 'urn-change': reloads when an update changes the Secret's `urn`; 'none': reads it at start only. */
  reloads: ReloadKind;
  /** One sentence, printable, with its source. */
  why: string;
}

/** A half-open range of released versions [from, below) and what those versions do. */
// exported for tests: the tests build rows of the table's shape
export interface ReloadRule {
  from: string;
  below?: string;
  reloads: Exclude<ReloadKind, 'unknown'>;
  why: string;
}

/**
 * Read in the agent's sources (docs/protocol.md §6d). No released version is known to reload: the
 * released `datadog-cluster-agent rotate-par-identity` (datadog-agent #52031) ends by asking for a
 * rollout restart, and the informer that reloads on a `urn` change was proposed in #52006, closed
 * unmerged. Versions after the last one read are not assumed either way.
 */
// exported for tests: the test checks the shipped table (no gap, no overlap) and extends it
export const RELOAD_TABLE: readonly ReloadRule[] = [
  {
    from: '0.0.0',
    below: '7.81.0',
    reloads: 'none',
    why: 'agents before 7.81.0 read the identity Secret only when they start (no identity watcher; datadog-agent #52031 and earlier)',
  },
  {
    from: '7.81.0',
    below: '7.82.0',
    reloads: 'none',
    why:
      '7.81.x reads the identity Secret only when it starts: its own rotate-par-identity ends with `kubectl rollout restart` ' +
      '(datadog-agent #52031); the watcher of #52006 was not merged',
  },
];

type Triple = [number, number, number];

/** N.N.N at the start of a version or image tag (7.81.1, 7.81.1-rc.2, 7.81.1+commit.abc, 7.81.1-fips, v7.81.1). */
function parseVersion(version: string): Triple | undefined {
  const m = /^v?(\d{1,4})\.(\d{1,4})\.(\d{1,4})(?:$|[-+._])/.exec(version);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** Whether a version or image tag starts with a release number (7.81.1…), rather than a floating tag. */
export function isReleaseVersion(version: string): boolean {
  return parseVersion(version) !== undefined;
}

function compare(a: Triple, b: Triple): number {
  for (let i = 0; i < 3; i++) if (a[i]! !== b[i]!) return a[i]! - b[i]!;
  return 0;
}

/** At most 64 printable characters of a version that came from a cluster object or the operator. */
function shown(version: string): string {
  return JSON.stringify(version.replace(/[^\x20-\x7e]/g, '?').slice(0, 64));
}

export function reloadBehaviour(agentVersion: string | undefined, table: readonly ReloadRule[] = RELOAD_TABLE): ReloadBehaviour {
  const both =
    "it may reload when the Secret's urn changes (a watcher exists in some agent sources) or only read it at start (every version read so far)";
  if (agentVersion === undefined || agentVersion === '') return { reloads: 'unknown', why: `the agent's version is not known: ${both}` };
  const v = parseVersion(agentVersion);
  if (!v)
    return {
      reloads: 'unknown',
      why: `agent version ${shown(agentVersion)} is not a release number (a floating tag or a digest): ${both}`,
    };
  for (const rule of table) {
    const from = parseVersion(rule.from)!;
    const below = rule.below === undefined ? undefined : parseVersion(rule.below)!;
    if (compare(v, from) >= 0 && (below === undefined || compare(v, below) < 0)) return { reloads: rule.reloads, why: rule.why };
  }
  return {
    reloads: 'unknown',
    why: `agent ${v.join('.')} is newer than the versions read in the agent's source (docs/protocol.md §6d): ${both}`,
  };
}

/**
 * The version an image reference names, from its tag (`registry/cluster-agent:7.81.1`, with or without
 * `@sha256:` after it); undefined for a digest alone or no tag. The tag is returned as written: whether it
 * is a release number is reloadBehaviour's to judge.
 */
export function agentVersionOfImage(image: string | undefined): string | undefined {
  if (!image) return undefined;
  const withoutDigest = image.split('@')[0]!;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  if (colon < 0) return undefined;
  const tag = withoutDigest.slice(colon + 1);
  return tag === '' ? undefined : tag.slice(0, 128);
}
