import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { cleanEnv } from '../e2e/run-cli.js';
import { CLOSED_METADATA_URL, isLoopbackUrl } from '../setup/no-cloud-metadata.js';

// The guard that keeps the suite off 169.254.169.254 (issue 14 §6): the setup file, the e2e
// environment and the demo scripts all carry a loopback PAR_IDENTITY_CLOUD_METADATA_URL.

describe('cloud metadata never leaves loopback in tests', () => {
  it('the setup file set a loopback URL in this test process', () => {
    expect(isLoopbackUrl(process.env.PAR_IDENTITY_CLOUD_METADATA_URL)).toBe(true);
  });

  it('cleanEnv carries it into every spawned binary, even when the caller removed it', () => {
    expect(isLoopbackUrl(cleanEnv().PAR_IDENTITY_CLOUD_METADATA_URL)).toBe(true);
    expect(cleanEnv({ PAR_IDENTITY_CLOUD_METADATA_URL: undefined }).PAR_IDENTITY_CLOUD_METADATA_URL).toBe(CLOSED_METADATA_URL);
    expect(cleanEnv({ PAR_IDENTITY_CLOUD_METADATA_URL: 'http://127.0.0.1:4567' }).PAR_IDENTITY_CLOUD_METADATA_URL).toBe(
      'http://127.0.0.1:4567',
    );
  });

  it('cleanEnv refuses a non-loopback metadata URL', () => {
    expect(() => cleanEnv({ PAR_IDENTITY_CLOUD_METADATA_URL: 'http://169.254.169.254' })).toThrow(/loopback/);
    expect(() => cleanEnv({ PAR_IDENTITY_CLOUD_METADATA_URL: 'http://100.100.100.200' })).toThrow(/loopback/);
  });

  it.each(['scripts/demo.mjs', 'scripts/demo-watch.mjs', 'scripts/bench.mjs', 'scripts/bench-watch.mjs'])(
    '%s sets it for the processes it starts',
    async (script) => {
      const text = await readFile(new URL(`../../${script}`, import.meta.url), 'utf8');
      expect(text).toMatch(/PAR_IDENTITY_CLOUD_METADATA_URL(: | = )'http:\/\/127\.0\.0\.1:\d+'/);
    },
  );

  it('isLoopbackUrl', () => {
    expect(isLoopbackUrl('http://127.0.0.1:1')).toBe(true);
    expect(isLoopbackUrl('http://localhost:80')).toBe(true);
    expect(isLoopbackUrl('http://[::1]:9')).toBe(true);
    expect(isLoopbackUrl('http://169.254.169.254')).toBe(false);
    expect(isLoopbackUrl('http://127.0.0.1.example.com')).toBe(false);
    expect(isLoopbackUrl(undefined)).toBe(false);
  });
});
