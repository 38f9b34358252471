import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { resolveSite } from '../../src/config/datadog-site.js';

// The one site rule of every command that talks to Datadog (docs/configuration.md, "Site").

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-site-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A profile that counts its reads. */
function profile(stored: { apiKey?: string; site?: string }) {
  const reads = { n: 0 };
  return {
    reads,
    read: async () => {
      reads.n++;
      return { ...stored, profile: 'p' };
    },
  };
}

async function site(env: NodeJS.ProcessEnv, apiKeySource: string | undefined, stored: { apiKey?: string; site?: string }) {
  const config = await loadAgentConfig({ cfgPath: dir, env });
  const keychain = profile(stored);
  const endpoint = await resolveSite(config, env, apiKeySource, keychain.read);
  return { site: endpoint.site, source: endpoint.siteSource, baseUrl: endpoint.baseUrl, reads: keychain.reads.n };
}

const EU = { apiKey: 'k', site: 'datadoghq.eu' };

describe('resolveSite', () => {
  it("a rotation whose API key is the profile's takes the profile's site", async () => {
    expect(await site({}, 'keychain profile p', EU)).toEqual({
      site: 'datadoghq.eu',
      source: 'keychain profile p',
      baseUrl: 'https://api.datadoghq.eu',
      reads: 1,
    });
  });

  it('a rotation whose API key comes from anywhere else never takes it, and does not read the keychain', async () => {
    expect(await site({}, 'env DD_API_KEY', EU)).toEqual({
      site: 'datadoghq.com',
      source: 'default',
      baseUrl: 'https://api.datadoghq.com',
      reads: 0,
    });
    expect(await site({}, 'file /k', EU)).toMatchObject({ site: 'datadoghq.com', reads: 0 });
  });

  it("a run that reads no key (status --verify, rollback) takes the profile's site when the profile would give the API key", async () => {
    expect(await site({}, undefined, EU)).toEqual({
      site: 'datadoghq.eu',
      source: 'keychain profile p',
      baseUrl: 'https://api.datadoghq.eu',
      reads: 1,
    });
  });

  it('…but not when the environment or the config has an API key, nor when the profile holds no API key', async () => {
    expect(await site({ DD_API_KEY: 'x' }, undefined, EU)).toMatchObject({ site: 'datadoghq.com', reads: 0 });
    expect(await site({}, undefined, { site: 'datadoghq.eu' })).toMatchObject({ site: 'datadoghq.com', source: 'default', reads: 1 });
  });

  it('the environment and the config come first, and then the keychain is not read', async () => {
    expect(await site({ DD_SITE: 'us5.datadoghq.com' }, 'keychain profile p', EU)).toEqual({
      site: 'us5.datadoghq.com',
      source: 'env DD_SITE',
      baseUrl: 'https://api.us5.datadoghq.com',
      reads: 0,
    });
    expect(await site({ DD_DD_URL: 'https://app.ddog-gov.com' }, undefined, EU)).toMatchObject({ site: 'ddog-gov.com', reads: 0 });
  });

  it('no keychain (a container): the default site', async () => {
    const config = await loadAgentConfig({ cfgPath: dir, env: {} });
    expect((await resolveSite(config, {}, undefined, async () => undefined)).site).toBe('datadoghq.com');
  });
});
