import { ConfigError } from '../errors.js';
import { sanitizeServerString } from '../sanitize.js';
import type { AgentConfig } from './agent-config.js';

// Where enrollment and health checks go (docs/protocol.md §3), with the reason, because operators must be
// told which base URL is used.

const SITE_FROM_HOST = /(?:^|\.)([a-z]{2,}\d{1,2}\.)?(datad(?:oghq|0g)\.(?:com|eu)|ddog-gov\.com)\.?$/;
// exported for tests: the test holds the default to the agent's
export const DEFAULT_SITE = 'datadoghq.com';

export interface Endpoint {
  baseUrl: string;
  /** Site used for the URN region. */
  site: string;
  /** Where the site came from: a config file or variable, `dd_url`, a keychain profile, `default`. */
  siteSource: string;
  how: string;
}

// exported for tests: every host form the agent reads a site from
export function siteFromHost(host: string): string | undefined {
  const match = SITE_FROM_HOST.exec(host.toLowerCase());
  if (!match) return undefined;
  return `${match[1] ?? ''}${match[2]}`;
}

/** One DNS label: letters, digits and inner hyphens, at most 63 characters. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * Why a site value is not a site name, or undefined when it is one. The agent puts the site into
 * `https://api.<site>` as it stands (docs/protocol.md §3), so a site is a bare DNS name of two labels
 * or more (an optional final dot): no scheme, port, path, user or blank.
 */
// exported for tests: each refused site, checked with its reason
export function siteProblem(site: string): string | undefined {
  if (/\s/.test(site)) return 'it contains blanks';
  if (site.includes('://')) return 'it is a URL (scheme and host), not a site name';
  if (site.includes('/')) return 'it contains a path';
  if (site.includes('@')) return 'it contains a user name';
  if (site.includes(':')) return 'it contains a port';
  const name = site.endsWith('.') ? site.slice(0, -1) : site;
  if (name.length > 253) return 'it is longer than a DNS name may be';
  const labels = name.split('.');
  if (labels.length < 2) return 'it is a single label, not a domain';
  if (!labels.every((l) => LABEL.test(l))) return 'it is not a DNS name (letters, digits, inner hyphens, dot-separated)';
  return undefined;
}

/** The site a refused value most likely meant (the host of `https://app.datadoghq.eu`), for the hint. */
function meantSite(value: string): string | undefined {
  try {
    return siteFromHost(new URL(value.includes('://') ? value : `https://${value}`).hostname);
  } catch {
    return undefined;
  }
}

/** Refuses a site that is not a bare site name, naming the value and where it came from (docs/configuration.md, "Site"). */
export function checkSite(site: string, source: string): void {
  const problem = siteProblem(site);
  if (!problem) return;
  const meant = meantSite(site);
  const example = meant ? ` (${meant} for this value)` : ' (datadoghq.com, datadoghq.eu, us3.datadoghq.com, …)';
  throw new ConfigError(
    'SITE_INVALID',
    `site ${JSON.stringify(sanitizeServerString(site, 200))} (from ${source}) is not a Datadog site name: ${problem}; ` +
      `the enrollment URL would be https://api.${sanitizeServerString(site, 200)}/…`,
    `Nothing was changed. Set the site to the bare site name${example}; a full URL belongs in dd_url.`,
    { site: sanitizeServerString(site, 200), source },
  );
}

/** dd_url is a URL by nature: http or https with a host, else it is refused with where it came from. */
function hostOf(ddUrl: string, source: string): string {
  let url: URL | undefined;
  try {
    url = new URL(ddUrl);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) {
    throw new ConfigError(
      'SITE_INVALID',
      `dd_url ${JSON.stringify(sanitizeServerString(ddUrl, 200))} (from ${source}) is not an http or https URL`,
      'Nothing was changed. Set dd_url to a full URL such as https://app.datadoghq.eu, or remove it and set the site.',
      { ddUrl: sanitizeServerString(ddUrl, 200), source },
    );
  }
  return url.hostname;
}

/**
 * The site, by precedence (docs/configuration.md, "Site"): the environment (DD_SITE, DD_DD_URL, DD_URL),
 * then the config files (`site`, `dd_url`), then the site stored with the keychain keys this run uses
 * (`stored`), then datadoghq.com.
 */
export function resolveEndpoint(config: AgentConfig, env: NodeJS.ProcessEnv, stored?: { site: string; source: string }): Endpoint {
  const ddUrl = config.getString('dd_url');
  // The table's default is not a setting: a stored site comes before it.
  const configuredSite = config.sourceOf('site') === 'default' ? undefined : config.getString('site');
  const site = configuredSite ?? stored?.site ?? config.getString('site') ?? DEFAULT_SITE;
  const siteSource = configuredSite ? config.sourceOf('site') : stored ? stored.source : 'default';
  // Checked wherever it comes from, even when dd_url decides the host: a URL in DD_SITE is a mistake to say.
  checkSite(site, siteSource);
  const ddUrlSource = config.sourceOf('dd_url');
  if (env.DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS === 'true' && ddUrl) {
    hostOf(ddUrl, ddUrlSource);
    const region = stored && !configuredSite ? `; site ${site} (${siteSource}) for the URN region` : '';
    return {
      baseUrl: ddUrl.replace(/\/+$/, ''),
      site,
      siteSource,
      how: `dd_url itself (${config.sourceOf('dd_url')}), because DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true${region}`,
    };
  }
  if (ddUrl) {
    const fromHost = siteFromHost(hostOf(ddUrl, ddUrlSource));
    if (fromHost)
      return {
        baseUrl: `https://api.${fromHost}`,
        site: fromHost,
        siteSource: `dd_url (${config.sourceOf('dd_url')})`,
        how: `site ${fromHost} taken from dd_url`,
      };
    return {
      baseUrl: `https://api.${site}`,
      site,
      siteSource,
      how: `dd_url is not a Datadog host, so site ${site} (${siteSource}) is used`,
    };
  }
  return { baseUrl: `https://api.${site}`, site, siteSource, how: `site ${site} (${siteSource})` };
}
