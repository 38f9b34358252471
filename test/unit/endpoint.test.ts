import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { DEFAULT_SITE, resolveEndpoint, siteFromHost } from '../../src/config/endpoint.js';
import { ConfigError } from '../../src/errors.js';
import { regionFromSite } from '../../src/identity/urn.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-endpoint-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Config from env only (the directory holds no datadog.yaml). */
async function endpointFor(env: NodeJS.ProcessEnv) {
  const config = await loadAgentConfig({ cfgPath: dir, env });
  return resolveEndpoint(config, env);
}

describe('siteFromHost (docs/protocol.md §3 regex)', () => {
  it.each([
    ['app.datadoghq.com', 'datadoghq.com'],
    ['app.datadoghq.eu', 'datadoghq.eu'],
    ['datadoghq.eu', 'datadoghq.eu'],
    ['us3.datadoghq.com', 'us3.datadoghq.com'],
    ['app.us3.datadoghq.com', 'us3.datadoghq.com'],
    ['us5.datadoghq.com', 'us5.datadoghq.com'],
    ['ap1.datadoghq.com', 'ap1.datadoghq.com'],
    ['app.ddog-gov.com', 'ddog-gov.com'],
    ['ddog-gov.com', 'ddog-gov.com'],
    ['dd.datad0g.com', 'datad0g.com'],
    ['intake.datadoghq.com.', 'datadoghq.com'],
    ['APP.DATADOGHQ.EU', 'datadoghq.eu'],
  ])('%s → %s', (host, site) => {
    expect(siteFromHost(host)).toBe(site);
  });

  it.each(['proxy.example.com', 'datadoghq.com.evil.example', 'notdatadoghq.com', 'localhost', '127.0.0.1'])('%s is not a Datadog host', (host) => {
    expect(siteFromHost(host)).toBeUndefined();
  });
});

describe('resolveEndpoint (docs/protocol.md §3)', () => {
  it.each([
    ['default site', {}, 'https://api.datadoghq.com', 'datadoghq.com', 'site datadoghq.com (default)'],
    ['site set', { DD_SITE: 'datadoghq.eu' }, 'https://api.datadoghq.eu', 'datadoghq.eu', 'site datadoghq.eu (env DD_SITE)'],
    ['site us3', { DD_SITE: 'us3.datadoghq.com' }, 'https://api.us3.datadoghq.com', 'us3.datadoghq.com', 'site us3.datadoghq.com (env DD_SITE)'],
    ['dd_url app.datadoghq.eu', { DD_DD_URL: 'https://app.datadoghq.eu' }, 'https://api.datadoghq.eu', 'datadoghq.eu', 'site datadoghq.eu taken from dd_url'],
    ['dd_url us3 (site ignored)', { DD_DD_URL: 'https://us3.datadoghq.com/', DD_SITE: 'datadoghq.eu' }, 'https://api.us3.datadoghq.com', 'us3.datadoghq.com', 'site us3.datadoghq.com taken from dd_url'],
    ['dd_url ddog-gov.com', { DD_URL: 'https://app.ddog-gov.com' }, 'https://api.ddog-gov.com', 'ddog-gov.com', 'site ddog-gov.com taken from dd_url'],
    [
      'non-Datadog dd_url falls back to site',
      { DD_DD_URL: 'https://proxy.internal:3834', DD_SITE: 'datadoghq.eu' },
      'https://api.datadoghq.eu',
      'datadoghq.eu',
      'dd_url is not a Datadog host, so site datadoghq.eu (env DD_SITE) is used',
    ],
    [
      'non-Datadog dd_url without site falls back to the default',
      { DD_DD_URL: 'https://proxy.internal' },
      'https://api.datadoghq.com',
      'datadoghq.com',
      'dd_url is not a Datadog host, so site datadoghq.com (default) is used',
    ],
    [
      'DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true: dd_url itself, trailing slashes trimmed, http allowed',
      { DD_DD_URL: 'http://127.0.0.1:8123//', DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' },
      'http://127.0.0.1:8123',
      'datadoghq.com',
      'dd_url itself (env DD_DD_URL), because DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true',
    ],
    [
      'the hook keeps a path prefix and the configured site for the region',
      { DD_URL: 'http://localhost:9000/emulator/', DD_SITE: 'datadoghq.eu', DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' },
      'http://localhost:9000/emulator',
      'datadoghq.eu',
      'dd_url itself (env DD_URL), because DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true',
    ],
    ['the hook set to anything but "true" is ignored', { DD_DD_URL: 'http://127.0.0.1:8123', DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: '1' }, 'https://api.datadoghq.com', 'datadoghq.com', 'dd_url is not a Datadog host, so site datadoghq.com (default) is used'],
    ['the hook without dd_url uses the site', { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', DD_SITE: 'ap1.datadoghq.com' }, 'https://api.ap1.datadoghq.com', 'ap1.datadoghq.com', 'site ap1.datadoghq.com (env DD_SITE)'],
  ])('%s', async (_name, env, baseUrl, site, how) => {
    expect(await endpointFor(env)).toMatchObject({ baseUrl, site, how });
  });

  it('names the config file as the source of site and dd_url', async () => {
    const fileDir = await mkdtemp(join(tmpdir(), 'par-endpoint-file-'));
    try {
      const file = join(fileDir, 'datadog.yaml');
      await writeFile(file, 'site: datadoghq.eu\n');
      const config = await loadAgentConfig({ cfgPath: fileDir, env: {} });
      expect(resolveEndpoint(config, {})).toMatchObject({ baseUrl: 'https://api.datadoghq.eu', site: 'datadoghq.eu', how: `site datadoghq.eu (${file})` });
      await writeFile(file, 'site: datadoghq.eu\ndd_url: http://emu:1/\n');
      const hooked = await loadAgentConfig({ cfgPath: fileDir, env: {} });
      expect(resolveEndpoint(hooked, { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' }).how).toBe(`dd_url itself (${file}), because DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true`);
    } finally {
      await rm(fileDir, { recursive: true, force: true });
    }
  });

  it.each([
    ['without the hook', {}],
    ['with the hook', { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' }],
  ])('a dd_url that is not a URL is CONFIG_VALUE (%s)', async (_name, extra) => {
    const err = await endpointFor({ DD_DD_URL: 'app.datadoghq.eu', ...extra }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('CONFIG_VALUE');
    expect((err as ConfigError).message).toBe('dd_url "app.datadoghq.eu" is not a URL');
  });

  it('the site of the endpoint gives the URN region', async () => {
    expect(DEFAULT_SITE).toBe('datadoghq.com');
    expect(regionFromSite((await endpointFor({ DD_DD_URL: 'https://app.datadoghq.eu' })).site)).toBe('eu1');
    expect(regionFromSite((await endpointFor({ DD_DD_URL: 'https://app.us3.datadoghq.com' })).site)).toBe('us3');
    expect(regionFromSite((await endpointFor({})).site)).toBe('us1');
  });
});

describe('the site stored with the keychain keys (docs/configuration.md §Site)', () => {
  const stored = { site: 'datadoghq.eu', source: 'keychain profile default' };
  it.each<[string, Record<string, string>, string, string]>([
    ['used when neither the environment nor the config sets one', {}, 'datadoghq.eu', 'keychain profile default'],
    ['DD_SITE wins over it', { DD_SITE: 'us5.datadoghq.com' }, 'us5.datadoghq.com', 'env DD_SITE'],
    ['a Datadog dd_url wins over it', { DD_DD_URL: 'https://app.ddog-gov.com' }, 'ddog-gov.com', 'dd_url (env DD_DD_URL)'],
    ['with a non-Datadog dd_url it is the site', { DD_DD_URL: 'http://127.0.0.1:8123' }, 'datadoghq.eu', 'keychain profile default'],
  ])('%s', async (_name, env, site, siteSource) => {
    const config = await loadAgentConfig({ cfgPath: dir, env });
    expect(resolveEndpoint(config, env, stored)).toMatchObject({ site, siteSource });
  });
});
