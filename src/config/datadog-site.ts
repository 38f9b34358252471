import { type AgentConfig, type Endpoint, resolveEndpoint } from './index.js';
import type { Reporter } from '../output.js';

// The one rule for the Datadog site (and so the API host) of every command that talks to Datadog,
// and of `credentials show`, which says what a rotation would use: docs/configuration.md, "Site".
// The environment and the config come first; the site stored with a keychain profile goes with that
// profile's keys (a key belongs to one organisation on one site), so it applies only when the run's
// API key is the profile's.

/** A keychain profile as a run reads it (`credentials set`). */
interface StoredProfile {
  apiKey?: string;
  appKey?: string;
  site?: string;
  profile: string;
}

/** The profile, read at most once a run; undefined where no keychain exists. */
type KeychainRead = () => Promise<StoredProfile | undefined>;

/** How config/credentials.ts names a key taken from a profile: `keychain profile <name>`. */
const FROM_PROFILE = 'keychain profile ';

/**
 * The keychain is the last source of keys; where none exists (containers) it is skipped with a note.
 * It is read once a run: its site goes with its keys.
 */
export function keychainSource(profile: string, report: Pick<Reporter, 'info'>): KeychainRead {
  let read: Promise<StoredProfile | undefined> | undefined;
  return () =>
    (read ??= (async () => {
      const { readProfile, KeychainUnavailableError } = await import('../credentials/index.js');
      try {
        const stored = await readProfile(profile);
        return {
          ...(stored.api_key ? { apiKey: stored.api_key } : {}),
          ...(stored.app_key ? { appKey: stored.app_key } : {}),
          ...(stored.site ? { site: stored.site } : {}),
          profile,
        };
      } catch (err) {
        if (!(err instanceof KeychainUnavailableError)) throw err;
        report.info(`keychain not consulted: ${err.message}`);
        return undefined;
      }
    })());
}

/**
 * The endpoint of a run. `apiKeySource`: where the run's API key came from (a rotation), or undefined
 * for a run that reads no key (status --verify, rollback) or only shows them (credentials show): then
 * the key a rotation would take, which is the profile's when neither the environment nor the config
 * has one. The keychain is read only when the site is the profile's to give.
 */
export async function resolveSite(
  config: AgentConfig,
  env: NodeJS.ProcessEnv,
  apiKeySource: string | undefined,
  keychain: KeychainRead,
): Promise<Endpoint> {
  const own = resolveEndpoint(config, env);
  if (own.siteSource !== 'default') return own;
  const keyIsProfiles = apiKeySource === undefined ? config.getString('api_key') === undefined : apiKeySource.startsWith(FROM_PROFILE);
  if (!keyIsProfiles) return own;
  const stored = await keychain();
  if (!stored?.site || (apiKeySource === undefined && !stored.apiKey)) return own;
  return resolveEndpoint(config, env, { site: stored.site, source: `${FROM_PROFILE}${stored.profile}` });
}
