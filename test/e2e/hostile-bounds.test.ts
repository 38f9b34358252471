import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { newIdentity } from '../fixtures/test-identities.js';
import { type ClusterFixture, clusterFixture } from './cluster-fixture.js';
import { type LocalFixture, localFixture } from './local-fixture.js';
import { BINARY_WAIT_MS } from './watch-fixture.js';

// Bounds on everything read (issue 31, point 6), against the built binary: a URN of 200 000
// characters in the Secret or in the identity file, and an agent config of more than 8 MiB, are
// refused with a clear, short error (docs/security.md, "Bounds on what is read"). The watch side of
// the same URN (the runner kept running) is in watch-server.test.ts.

vi.setConfig({ testTimeout: 4 * BINARY_WAIT_MS, hookTimeout: BINARY_WAIT_MS });

const HUGE_RUNNER_ID = 'r'.repeat(200_000);
const hugeUrn = () => `urn:dd:apps:on-prem-runner:us1:1234567:${HUGE_RUNNER_ID}`;

describe('status --secret on a Secret whose urn is 200 000 characters', () => {
  let cx: ClusterFixture;
  beforeEach(async () => {
    cx = await clusterFixture();
  });
  afterEach(async () => {
    await cx.close();
  });

  it('names it invalid by its length, and prints a few hundred bytes, not the URN', async () => {
    expect((await cx.rotate(['--no-verify'])).code).toBe(0);
    const secret = cx.secret()!;
    (secret.data as Record<string, string>).urn = Buffer.from(hugeUrn()).toString('base64');
    cx.kube.updateObject(secret);
    for (const json of [false, true]) {
      const status = await cx.run(['status', '--secret', '-c', cx.dir, '--kubeconfig', cx.adminKubeconfig, ...(json ? ['--json'] : [])], {
        timeoutMs: BINARY_WAIT_MS,
      });
      const printed = status.stdout + status.stderr;
      expect(printed).toContain('urn: is 200039 characters long (at most 368)');
      expect(printed).not.toContain('r'.repeat(400));
      expect(printed.length).toBeLessThan(16 * 1024);
    }
  });
});

describe('files larger than anything par-identity writes or the agent ships', () => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await localFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('a datadog.yaml of 9 MiB: CONFIG_TOO_LARGE, exit 3, naming the file and its size, nothing enrolled', async () => {
    await fx.writeConfig();
    const main = join(fx.dir, 'datadog.yaml');
    const config = await readFile(main, 'utf8');
    await writeFile(main, `${config}${'#'.repeat(99)}\n`.padEnd(9 * 1024 * 1024, `${'#'.repeat(99)}\n`));
    for (const json of [false, true]) {
      const rotate = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', ...(json ? ['--json'] : [])], {
        timeoutMs: BINARY_WAIT_MS,
      });
      expect(rotate.code, rotate.stderr).toBe(3);
      const text = json ? rotate.stdout : rotate.stderr;
      expect(text).toContain('CONFIG_TOO_LARGE');
      expect(text).toContain(
        `config file ${main} is ${9 * 1024 * 1024} bytes or more: par-identity reads agent config files of at most 8 MiB`,
      );
    }
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
  });

  it('an identity file whose urn is 200 000 characters: status calls it invalid by its length and does not print it', async () => {
    await fx.writeConfig();
    const id = newIdentity();
    await writeFile(fx.identityPath, JSON.stringify({ private_key: id.privateKey, urn: hugeUrn() }), { mode: 0o600 });
    const status = await fx.run(['status', '-c', fx.dir], { timeoutMs: BINARY_WAIT_MS });
    const printed = status.stdout + status.stderr;
    expect(printed).toContain('file: is 200');
    expect(printed).toContain('(an identity file is at most 64 KiB)');
    expect(printed).not.toContain('r'.repeat(400));
  });
});
