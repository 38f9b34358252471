import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { checkSite, DEFAULT_SITE, resolveEndpoint, siteFromHost, siteProblem } from '../../src/config/endpoint.js';
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

  it.each(['proxy.example.com', 'datadoghq.com.evil.example', 'notdatadoghq.com', 'localhost', '127.0.0.1'])(
    '%s is not a Datadog host',
    (host) => {
      expect(siteFromHost(host)).toBeUndefined();
    },
  );
});

describe('resolveEndpoint (docs/protocol.md §3)', () => {
  it.each([
    ['default site', {}, 'https://api.datadoghq.com', 'datadoghq.com', 'site datadoghq.com (default)'],
    ['site set', { DD_SITE: 'datadoghq.eu' }, 'https://api.datadoghq.eu', 'datadoghq.eu', 'site datadoghq.eu (env DD_SITE)'],
    [
      'site us3',
      { DD_SITE: 'us3.datadoghq.com' },
      'https://api.us3.datadoghq.com',
      'us3.datadoghq.com',
      'site us3.datadoghq.com (env DD_SITE)',
    ],
    [
      'dd_url app.datadoghq.eu',
      { DD_DD_URL: 'https://app.datadoghq.eu' },
      'https://api.datadoghq.eu',
      'datadoghq.eu',
      'site datadoghq.eu taken from dd_url',
    ],
    [
      'dd_url us3 (site ignored)',
      { DD_DD_URL: 'https://us3.datadoghq.com/', DD_SITE: 'datadoghq.eu' },
      'https://api.us3.datadoghq.com',
      'us3.datadoghq.com',
      'site us3.datadoghq.com taken from dd_url',
    ],
    [
      'dd_url ddog-gov.com',
      { DD_URL: 'https://app.ddog-gov.com' },
      'https://api.ddog-gov.com',
      'ddog-gov.com',
      'site ddog-gov.com taken from dd_url',
    ],
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
    [
      'the hook set to anything but "true" is ignored',
      { DD_DD_URL: 'http://127.0.0.1:8123', DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: '1' },
      'https://api.datadoghq.com',
      'datadoghq.com',
      'dd_url is not a Datadog host, so site datadoghq.com (default) is used',
    ],
    [
      'the hook without dd_url uses the site',
      { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', DD_SITE: 'ap1.datadoghq.com' },
      'https://api.ap1.datadoghq.com',
      'ap1.datadoghq.com',
      'site ap1.datadoghq.com (env DD_SITE)',
    ],
  ])('%s', async (_name, env, baseUrl, site, how) => {
    expect(await endpointFor(env)).toMatchObject({ baseUrl, site, how });
  });

  it('names the config file as the source of site and dd_url', async () => {
    const fileDir = await mkdtemp(join(tmpdir(), 'par-endpoint-file-'));
    try {
      const file = join(fileDir, 'datadog.yaml');
      await writeFile(file, 'site: datadoghq.eu\n');
      const config = await loadAgentConfig({ cfgPath: fileDir, env: {} });
      expect(resolveEndpoint(config, {})).toMatchObject({
        baseUrl: 'https://api.datadoghq.eu',
        site: 'datadoghq.eu',
        how: `site datadoghq.eu (${file})`,
      });
      await writeFile(file, 'site: datadoghq.eu\ndd_url: http://emu:1/\n');
      const hooked = await loadAgentConfig({ cfgPath: fileDir, env: {} });
      expect(resolveEndpoint(hooked, { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' }).how).toBe(
        `dd_url itself (${file}), because DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true`,
      );
    } finally {
      await rm(fileDir, { recursive: true, force: true });
    }
  });

  it.each([
    ['without the hook', {}, 'app.datadoghq.eu'],
    ['with the hook', { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' }, 'app.datadoghq.eu'],
    ['another scheme', {}, 'ftp://app.datadoghq.eu'],
    ['no host', { DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' }, 'file:///tmp/x'],
  ])('a dd_url that is not an http(s) URL is SITE_INVALID, naming value and source (%s)', async (_name, extra, ddUrl) => {
    const err = await endpointFor({ DD_DD_URL: ddUrl, ...extra }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('SITE_INVALID');
    expect((err as ConfigError).message).toBe(`dd_url ${JSON.stringify(ddUrl)} (from env DD_DD_URL) is not an http or https URL`);
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

describe('the site rule: a bare DNS name, as the agent puts it in https://api.<site> (docs/configuration.md, "Site")', () => {
  it.each([
    'datadoghq.com',
    'datadoghq.eu',
    'us3.datadoghq.com',
    'us5.datadoghq.com',
    'ap1.datadoghq.com',
    'ap2.datadoghq.com',
    'ddog-gov.com',
    'datad0g.com',
    'DATADOGHQ.EU',
    'datadoghq.com.',
    'site.example-corp.internal',
  ])('%s is a site name', (site) => {
    expect(siteProblem(site)).toBeUndefined();
    expect(() => checkSite(site, 'env DD_SITE')).not.toThrow();
  });

  it.each([
    ['https://app.datadoghq.eu', 'it is a URL (scheme and host), not a site name', 'datadoghq.eu'],
    ['app.datadoghq.eu/', 'it contains a path', 'datadoghq.eu'],
    ['datadoghq.eu:443', 'it contains a port', 'datadoghq.eu'],
    ['user@datadoghq.eu', 'it contains a user name', 'datadoghq.eu'],
    ['datadoghq eu', 'it contains blanks', undefined],
    ['datadoghq', 'it is a single label, not a domain', undefined],
    ['-bad.datadoghq.com', 'it is not a DNS name (letters, digits, inner hyphens, dot-separated)', undefined],
    ['datadoghq..com', 'it is not a DNS name (letters, digits, inner hyphens, dot-separated)', undefined],
    ['datadoghq_eu.com', 'it is not a DNS name (letters, digits, inner hyphens, dot-separated)', undefined],
  ])('%s is refused: %s', (site, problem, meant) => {
    expect(siteProblem(site)).toBe(problem);
    const err = (() => {
      try {
        checkSite(site, 'env DD_SITE');
      } catch (e) {
        return e;
      }
    })() as ConfigError;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.code).toBe('SITE_INVALID');
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain(`site ${JSON.stringify(site)} (from env DD_SITE) is not a Datadog site name: ${problem}`);
    if (meant) expect(err.hint).toContain(`(${meant} for this value)`);
  });

  it('resolveEndpoint refuses a URL in DD_SITE even when dd_url decides the host (issue 30 point 3)', async () => {
    for (const env of [
      { DD_SITE: 'https://app.datadoghq.eu' },
      { DD_SITE: 'https://app.datadoghq.eu', DD_DD_URL: 'https://app.datadoghq.eu' },
    ]) {
      const err = await endpointFor(env).catch((e: unknown) => e);
      expect((err as ConfigError).code).toBe('SITE_INVALID');
      expect((err as ConfigError).message).toContain('site "https://app.datadoghq.eu" (from env DD_SITE)');
    }
  });

  it('a stored (keychain) site is held to the same rule', async () => {
    const config = await loadAgentConfig({ cfgPath: dir, env: {} });
    expect(() => resolveEndpoint(config, {}, { site: 'https://datadoghq.eu', source: 'keychain profile p' })).toThrow(
      '(from keychain profile p)',
    );
  });
});

describe('site → URN region (docs/protocol.md §1)', () => {
  it.each([
    ['datadoghq.com', 'us1'],
    ['datadoghq.eu', 'eu1'],
    ['DATADOGHQ.EU.', 'eu1'],
    ['us3.datadoghq.com', 'us3'],
    ['us5.datadoghq.com', 'us5'],
    ['ap1.datadoghq.com', 'ap1'],
    ['ap2.datadoghq.com', 'ap2'],
    ['ddog-gov.com', 'us1'],
    ['datad0g.com', 'us1'],
  ])('%s → %s', (site, region) => {
    expect(regionFromSite(site)).toBe(region);
  });
});
