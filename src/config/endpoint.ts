import { ConfigError } from '../errors.js';
import type { AgentConfig } from './agent-config.js';

// Where enrollment and health checks go (docs/protocol.md §3), with the reason, because operators must be
// told which base URL is used.

const SITE_FROM_HOST = /(?:^|\.)([a-z]{2,}\d{1,2}\.)?(datad(?:oghq|0g)\.(?:com|eu)|ddog-gov\.com)\.?$/;
export const DEFAULT_SITE = 'datadoghq.com';

export interface Endpoint {
  baseUrl: string;
  /** Site used for the URN region. */
  site: string;
  /** Where the site came from: a config file or variable, `dd_url`, a keychain profile, `default`. */
  siteSource: string;
  how: string;
}

export function siteFromHost(host: string): string | undefined {
  const match = SITE_FROM_HOST.exec(host.toLowerCase());
  if (!match) return undefined;
  return `${match[1] ?? ''}${match[2]}`;
}

function hostOf(ddUrl: string): string {
  try {
    return new URL(ddUrl).hostname;
  } catch {
    throw new ConfigError('CONFIG_VALUE', `dd_url ${JSON.stringify(ddUrl)} is not a URL`, 'Set dd_url to a full URL such as https://app.datadoghq.eu, or remove it.');
  }
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
  if (env.DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS === 'true' && ddUrl) {
    hostOf(ddUrl);
    return {
      baseUrl: ddUrl.replace(/\/+$/, ''),
      site,
      siteSource,
      how: `dd_url itself (${config.sourceOf('dd_url')}), because DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true${stored && !configuredSite ? `; site ${site} (${siteSource}) for the URN region` : ''}`,
    };
  }
  if (ddUrl) {
    const fromHost = siteFromHost(hostOf(ddUrl));
    if (fromHost) return { baseUrl: `https://api.${fromHost}`, site: fromHost, siteSource: `dd_url (${config.sourceOf('dd_url')})`, how: `site ${fromHost} taken from dd_url` };
    return {
      baseUrl: `https://api.${site}`,
      site,
      siteSource,
      how: `dd_url is not a Datadog host, so site ${site} (${siteSource}) is used`,
    };
  }
  return { baseUrl: `https://api.${site}`, site, siteSource, how: `site ${site} (${siteSource})` };
}
