import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { buildUrn, decodeIdentity, encodePrivateJwk, generateIdentityKey } from '../../src/identity/index.js';
import { checkRegionChange, siteRegionOf } from '../../src/rotation/region-check.js';

// The URN region is the site's (docs/protocol.md §1): a rotation that would change it stops before
// enrolling unless asked for (docs/configuration.md, "Region").

function identityIn(region: string) {
  const urn = buildUrn({ region, orgId: 42, runnerId: 'r-1' });
  return decodeIdentity({ privateKey: encodePrivateJwk(generateIdentityKey()), urn });
}

describe('checkRegionChange', () => {
  it('the same region passes, whatever the spelling of the site', () => {
    expect(checkRegionChange({ site: 'datadoghq.com', siteSource: 'default' }, identityIn('us1'), false)).toBeUndefined();
    expect(checkRegionChange({ site: 'ddog-gov.com', siteSource: 'env DD_SITE' }, identityIn('us1'), false)).toBeUndefined();
    expect(
      checkRegionChange({ site: 'DATADOGHQ.EU', siteSource: '/etc/datadog-agent/datadog.yaml' }, identityIn('eu1'), false),
    ).toBeUndefined();
  });

  it('nothing to replace: nothing to compare', () => {
    expect(checkRegionChange({ site: 'datadoghq.eu', siteSource: 'env DD_SITE' }, undefined, false)).toBeUndefined();
  });

  it('another region is REGION_CHANGE (exit 3), naming both regions and what chose each', () => {
    const identity = identityIn('us1');
    let err: unknown;
    try {
      checkRegionChange({ site: 'datadoghq.eu', siteSource: 'env DD_SITE' }, identity, false);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({
      code: 'REGION_CHANGE',
      exitCode: 3,
      message: `the rotation would move the identity from region us1 to eu1: site datadoghq.eu (from env DD_SITE) is in region eu1, but the identity in service (${identity.record.urn}) is in region us1`,
      details: { site: 'datadoghq.eu', siteSource: 'env DD_SITE', siteRegion: 'eu1', identityRegion: 'us1' },
    });
    expect((err as ConfigError).hint).toContain('--allow-region-change');
  });

  it('allowed: a warning that says the runner moves', () => {
    expect(checkRegionChange({ site: 'ap2.datadoghq.com', siteSource: 'dd_url (env DD_DD_URL)' }, identityIn('us1'), true)).toBe(
      '--allow-region-change: site ap2.datadoghq.com (from dd_url (env DD_DD_URL)) is in region ap2, but the identity in service (urn:dd:apps:on-prem-runner:us1:42:r-1) is in region us1; the new runner is enrolled in region ap2',
    );
  });

  it('siteRegionOf: what status reports', () => {
    expect(siteRegionOf({ site: 'us3.datadoghq.com', siteSource: 'env DD_SITE' }, identityIn('us5'))).toEqual({
      site: 'us3.datadoghq.com',
      source: 'env DD_SITE',
      region: 'us3',
      identityRegion: 'us5',
      matchesIdentity: false,
    });
  });
});
