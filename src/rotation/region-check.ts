import type { Endpoint } from '../config/index.js';
import { ConfigError } from '../errors.js';
import { type DecodedIdentity, regionFromSite } from '../identity/index.js';
import type { SiteRegion } from '../results/status.js';

// The URN's region is the site's (docs/protocol.md §1): a rotation enrolls in the region of the site
// it resolves, so a stray DD_SITE would move a runner to another region without a word (issue 30).
// A rotation that would change the region stops before enrolling unless it is asked for
// (--allow-region-change); status reports a site whose region is not the identity's
// (docs/configuration.md, "Region").

export function siteRegionOf(endpoint: Pick<Endpoint, 'site' | 'siteSource'>, identity: DecodedIdentity): SiteRegion {
  const region = regionFromSite(endpoint.site);
  return {
    site: endpoint.site,
    source: endpoint.siteSource,
    region,
    identityRegion: identity.urn.region,
    matchesIdentity: region === identity.urn.region,
  };
}

/** The finding's sentence, for status and for the rotation's refusal. */
export function describeRegionChange(found: SiteRegion, urn: string): string {
  return `site ${found.site} (from ${found.source}) is in region ${found.region}, but the identity in service (${urn}) is in region ${found.identityRegion}`;
}

/**
 * Before enrolling: the new URN's region must be the one it replaces, unless `allow`. Returns the
 * warning a permitted change prints, or undefined when the region stays (or there is nothing to replace).
 */
export function checkRegionChange(
  endpoint: Pick<Endpoint, 'site' | 'siteSource'>,
  current: DecodedIdentity | undefined,
  allow: boolean,
): string | undefined {
  if (!current) return undefined;
  const found = siteRegionOf(endpoint, current);
  if (found.matchesIdentity) return undefined;
  const what = describeRegionChange(found, current.record.urn);
  if (allow) return `--allow-region-change: ${what}; the new runner is enrolled in region ${found.region}`;
  throw new ConfigError(
    'REGION_CHANGE',
    `the rotation would move the identity from region ${found.identityRegion} to ${found.region}: ${what}`,
    `Nothing was enrolled and nothing was changed. If the site is wrong, correct or unset it (${found.source}) ` +
      `so that it is the site of region ${found.identityRegion}; if the runner really moves to ${found.region}, ` +
      'run again with --allow-region-change.',
    { site: found.site, siteSource: found.source, siteRegion: found.region, identityRegion: found.identityRegion },
  );
}
