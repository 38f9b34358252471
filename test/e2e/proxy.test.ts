import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LoopbackProxy, startLoopbackProxy } from '../fixtures/loopback-proxy.js';
import { type LocalFixture, localFixture } from './local-fixture.js';

// The built binary sends enrollment and verification through the agent's proxy and says which.

let fx: LocalFixture;
let proxy: LoopbackProxy;
beforeEach(async () => {
  fx = await localFixture();
  proxy = await startLoopbackProxy();
});
afterEach(async () => {
  await proxy.close();
  await fx.close();
});

describe('proxy from the agent config', () => {
  it('enrolls and verifies through proxy.http, printing the proxy host and never its credentials', async () => {
    await fx.writeConfig(`proxy:\n  http: http://puser:pw-s3cret@127.0.0.1:${proxy.port}\n`);
    const run = await fx.run(['rotate-identity', '-c', fx.dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toContain(`proxy: http via 127.0.0.1:${proxy.port}`);
    expect(run.stdout + run.stderr).not.toContain('pw-s3cret');
    expect(proxy.seen.map((s) => s.method)).toEqual(['POST', 'GET']);
    expect(proxy.seen[0]!.target).toBe(`${fx.emulator.url}/api/unstable/on_prem_runners`);
    expect(proxy.seen[0]!.authorization).toBe(`Basic ${Buffer.from('puser:pw-s3cret').toString('base64')}`);
  });

  it('DD_PROXY_NO_PROXY with the exact host:port bypasses it', async () => {
    await fx.writeConfig(`proxy:\n  http: http://127.0.0.1:${proxy.port}\n`);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], {
      env: { DD_PROXY_NO_PROXY: new URL(fx.emulator.url).host },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(proxy.seen).toEqual([]);
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 is reported as ignored', async () => {
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored');
  });
});
