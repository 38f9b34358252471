import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../emulators/enrollment/index.js';
import { type LocalFixture, localFixture } from './local-fixture.js';
import { type RunningCli, startCli } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import { eventually, identityData, type KubeFixture, kubeFixture, NAMESPACE, newIdentity } from './watch-fixture.js';

// One redaction (issue 31, point 7): servers that repeat the secrets they were sent. The enrollment
// API answers 400 with the request's headers (the API and application keys) in its error text; the
// Kubernetes API answers watch's list with a 403 whose message holds the bearer token. Neither reaches
// stdout, stderr or --json: every secret the process holds is masked (src/secrets-held.ts), and the
// mask says what was there.

describe('an enrollment 400 that repeats the API and application keys', () => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await localFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  for (const json of [false, true]) {
    it(`ENROLL_REJECTED with the server's words, both keys masked${json ? ' (--json)' : ''}`, async () => {
      fx.emulator.script('enroll', { echoRequest: true });
      const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify', ...(json ? ['--json'] : [])]);
      expect(run.code, run.stderr).toBe(5);
      const out = `${run.stdout}\n${run.stderr}`;
      // The echo was there (the server's words are shown) and the keys in it are not.
      expect(out).toContain('ENROLL_REJECTED');
      expect(out).toContain('dd-api-key: [redacted API key]');
      expect(out).toContain('dd-application-key: [redacted application key]');
      expect(out).not.toContain(DEFAULT_API_KEY);
      expect(out).not.toContain(DEFAULT_APP_KEY);
      if (json) {
        const doc = JSON.parse(run.stdout) as { code: string; message: string };
        expect(doc.code).toBe('ENROLL_REJECTED');
        expect(doc.message).toContain('[redacted API key]');
      }
    });
  }
});

describe("a 403 that repeats the bearer token, in watch's events", () => {
  let kube: KubeFixture;
  let dir: string;
  const running: RunningCli[] = [];
  beforeEach(async () => {
    kube = await kubeFixture();
    dir = await mkdtemp(join(tmpdir(), 'par-echo-'));
    await writeFile(join(dir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
  });
  afterEach(async () => {
    for (const run of running.splice(0)) run.child.kill('SIGKILL');
    await kube.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const json of [false, true]) {
    it(`the watch-error event names the 403, the token masked; the watch goes on${json ? ' (--json)' : ''}`, async () => {
      const token = 'par-echo-token-0123456789abcdefghijklmnopqrstuvwxyz';
      kube.emu.addToken(token, {
        user: 'system:serviceaccount:datadog:echo',
        namespace: NAMESPACE,
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
      });
      const kubeconfig = join(dir, 'kubeconfig');
      await kube.emu.writeKubeconfig(kubeconfig, { token, namespace: NAMESPACE });
      kube.create(identityData(newIdentity()));
      kube.emu.faults.failNext(
        { resource: 'secrets', verb: 'list' },
        {
          code: 403,
          message: `secrets is forbidden: the token ${token} (base64 ${Buffer.from(token).toString('base64')}) cannot list secrets`,
        },
      );
      const run = startCli(['watch', '-c', dir, '--kubeconfig', kubeconfig, ...(json ? ['--json'] : [])], {
        env: { NO_COLOR: '1', PAR_IDENTITY_RETRY_INITIAL_MS: '20' },
      });
      running.push(run);
      const out = () => `${run.stdout()}\n${run.stderr()}`;
      // The 403 is reported, then the retried list loads the identity.
      await eventually(() => expect(out()).toMatch(/loaded/), 20_000);
      expect(out()).toContain('secrets is forbidden: the token [redacted bearer token] (base64 [redacted bearer token])');
      expect(out()).not.toContain(token);
      expect(out()).not.toContain(Buffer.from(token).toString('base64'));
      run.child.kill('SIGTERM');
      expect((await run.exit).code, run.stderr()).toBe(0);
    });
  }
});
