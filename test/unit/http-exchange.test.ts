import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/agent-config.js';
import { DEFAULT_NETWORK, type NetworkSettings, resolveNetworkSettings } from '../../src/config/network-settings.js';
import { generateIpcCertificate } from '../../emulators/agent-ipc/ipc-certificate.js';
import { enroll } from '../../src/enrollment/enroll.js';
import { exchange } from '../../src/enrollment/http-exchange.js';
import { ResponseTooLargeError } from '../../src/http-body.js';
import { proxyFor } from '../../src/enrollment/proxy-choice.js';
import { tlsCertificateErrorCode } from '../../src/enrollment/tls-errors.js';
import { type Clock, Deadline } from '../../src/time/index.js';
import { type LoopbackProxy, startLoopbackProxy } from '../fixtures/loopback-proxy.js';

let tlsServer: Server;
let tlsUrl: string;
let tls12Server: Server;
let tls12Url: string;
let plainServer: Server;
let plainUrl: string;
let proxy: LoopbackProxy;
let dir: string;

function answer(_req: unknown, res: import('node:http').ServerResponse) {
  const req = _req as import('node:http').IncomingMessage;
  if (req.url === '/big') {
    res.writeHead(200);
    res.end(Buffer.alloc(1024 * 1024 + 10));
    return;
  }
  if (req.url === '/slow') return;
  res.writeHead(200, { 'Content-Type': 'application/json', 'X-Seen-Host': req.headers.host ?? '' });
  res.end(JSON.stringify({ path: req.url }));
}

async function listen(server: Server, scheme: string): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const cert = await generateIpcCertificate();
  tlsServer = createHttpsServer({ cert: cert.cert, key: cert.key }, answer);
  tlsUrl = await listen(tlsServer, 'https');
  tls12Server = createHttpsServer({ cert: cert.cert, key: cert.key, maxVersion: 'TLSv1.2' }, answer);
  tls12Url = await listen(tls12Server, 'https');
  plainServer = createHttpServer(answer);
  plainUrl = await listen(plainServer, 'http');
});
afterAll(async () => {
  for (const s of [tlsServer, tls12Server, plainServer]) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});
beforeEach(async () => {
  proxy = await startLoopbackProxy();
  dir = await mkdtemp(join(tmpdir(), 'par-net-'));
});
afterEach(async () => {
  await proxy.close();
  await rm(dir, { recursive: true, force: true });
});

async function settings(yaml: string, env: NodeJS.ProcessEnv = {}): Promise<NetworkSettings> {
  await writeFile(join(dir, 'datadog.yaml'), yaml);
  return resolveNetworkSettings(await loadAgentConfig({ cfgPath: dir, env }), env);
}

describe('network settings from the agent config', () => {
  it('proxy: block, then DD_PROXY_*, then the standard variables; the summary shows hosts, never credentials', async () => {
    const fromFile = await settings('proxy:\n  https: http://user:s3cret@proxy.corp:3128\n  no_proxy: [a.example, b.example]\n');
    expect(fromFile.proxy.https).toMatchObject({
      hostname: 'proxy.corp',
      port: 3128,
      display: 'proxy.corp:3128',
      authorization: `Basic ${Buffer.from('user:s3cret').toString('base64')}`,
    });
    expect(fromFile.proxy.noProxy).toEqual(['a.example', 'b.example', '169.254.169.254', '100.100.100.200']);
    expect(fromFile.summary).toBe('proxy: https via proxy.corp:3128 (no_proxy: 4 entries, exact host matching)');
    expect(fromFile.summary).not.toContain('s3cret');
    const dd = await settings('proxy:\n  https: http://file:1\n', {
      DD_PROXY_HTTPS: 'http://dd:2',
      HTTPS_PROXY: 'http://std:3',
      DD_PROXY_NO_PROXY: 'x.example y.example,z.example',
    });
    expect(dd.proxy.https!.display).toBe('dd:2');
    expect(dd.proxy.noProxy.slice(0, 3)).toEqual(['x.example', 'y.example', 'z.example']);
    const std = await settings('', { https_proxy: 'http://std:3', NO_PROXY: 'a.example,b.example' });
    expect(std.proxy.https!.display).toBe('std:3');
    expect(std.proxy.noProxy.slice(0, 2)).toEqual(['a.example', 'b.example']);
    expect((await settings('')).summary).toBe('proxy: none');
  });

  it('use_proxy_for_cloud_metadata keeps the metadata addresses off no_proxy', async () => {
    expect((await settings('use_proxy_for_cloud_metadata: true\n')).proxy.noProxy).toEqual([]);
  });

  it('TLS: verified unless skip_ssl_validation (loud warning); NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored with a warning; min_tls_version', async () => {
    const skip = await settings('skip_ssl_validation: true\nmin_tls_version: tlsv1.3\n');
    expect(skip.tls).toEqual({ rejectUnauthorized: false, minVersion: 'TLSv1.3' });
    expect(skip.warnings[0]).toMatch(/^TLS CERTIFICATES ARE NOT VERIFIED/);
    const env = await settings('', { NODE_TLS_REJECT_UNAUTHORIZED: '0' });
    expect(env.tls).toEqual({ rejectUnauthorized: true, minVersion: 'TLSv1.2' });
    expect(env.warnings[0]).toMatch(/NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored/);
    await expect(settings('min_tls_version: ssl3\n')).rejects.toMatchObject({ code: 'CONFIG_VALUE' });
    await expect(settings('proxy:\n  https: socks5://p:1080\n')).rejects.toMatchObject({ code: 'PROXY_INVALID' });
  });

  it('no_proxy: exact host[:port] by default; suffixes and CIDRs only with no_proxy_nonexact_match', async () => {
    const exact = await settings('proxy:\n  https: http://p:1\n  no_proxy: [api.example.com, 10.0.0.0/8, .corp.example]\n');
    expect(proxyFor(new URL('https://api.example.com/x'), exact)).toBeUndefined();
    expect(proxyFor(new URL('https://eu.api.example.com/x'), exact)?.display).toBe('p:1');
    expect(proxyFor(new URL('https://10.1.2.3/x'), exact)?.display).toBe('p:1');
    expect(proxyFor(new URL('https://a.corp.example/x'), exact)?.display).toBe('p:1');
    expect(
      proxyFor(new URL('http://169.254.169.254/latest'), { ...exact, proxy: { ...exact.proxy, http: exact.proxy.https! } }),
    ).toBeUndefined();
    const loose = await settings(
      'no_proxy_nonexact_match: true\nproxy:\n  https: http://p:1\n  no_proxy: [example.com, 10.0.0.0/8, .corp.example, "other.example:8443"]\n',
    );
    expect(proxyFor(new URL('https://eu.api.example.com/x'), loose)).toBeUndefined();
    expect(proxyFor(new URL('https://notexample.com/x'), loose)?.display).toBe('p:1');
    expect(proxyFor(new URL('https://10.1.2.3/x'), loose)).toBeUndefined();
    expect(proxyFor(new URL('https://a.corp.example/x'), loose)).toBeUndefined();
    expect(proxyFor(new URL('https://other.example:8443/x'), loose)).toBeUndefined();
    expect(proxyFor(new URL('https://other.example/x'), loose)?.display).toBe('p:1');
  });
});

describe('exchange over node:http(s)', () => {
  const noVerify: NetworkSettings = { ...DEFAULT_NETWORK, tls: { ...DEFAULT_NETWORK.tls, rejectUnauthorized: false } };

  it('https through a real CONNECT proxy, with Proxy-Authorization and TLS inside the tunnel', async () => {
    const network = await settings(`skip_ssl_validation: true\nproxy:\n  https: http://u:p@127.0.0.1:${proxy.port}\n`);
    const res = await exchange('GET', `${tlsUrl}/hello`, { Accept: 'application/json' }, undefined, 5000, network);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ path: '/hello' });
    expect(proxy.seen).toEqual([
      { method: 'CONNECT', target: new URL(tlsUrl).host, authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
    ]);
  });

  it('http through the proxy in absolute form; a POST body arrives whole', async () => {
    const network = await settings(`proxy:\n  http: http://127.0.0.1:${proxy.port}\n`);
    const res = await exchange('POST', `${plainUrl}/p?q=1`, { 'Content-Type': 'application/json' }, '{"a":1}', 5000, network);
    expect(res.status).toBe(200);
    expect(res.headers['x-seen-host']).toBe(new URL(plainUrl).host);
    expect(proxy.seen).toEqual([{ method: 'POST', target: `${plainUrl}/p?q=1` }]);
  });

  it('a proxy refusing CONNECT is a clear network error naming the proxy host only', async () => {
    proxy.refuseWith = 407;
    const network = await settings(`proxy:\n  https: http://u:secret@127.0.0.1:${proxy.port}\n`);
    const err = (await exchange('GET', `${tlsUrl}/x`, {}, undefined, 5000, network).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe(`proxy 127.0.0.1:${proxy.port} answered HTTP 407 to CONNECT`);
  });

  it('an untrusted certificate is a TLS certificate error, also with NODE_TLS_REJECT_UNAUTHORIZED=0', async () => {
    const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    try {
      const err = await exchange('GET', `${tlsUrl}/x`, {}, undefined, 5000).catch((e: unknown) => e);
      expect(tlsCertificateErrorCode(err)).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
      const tunnelled = await exchange(
        'GET',
        `${tlsUrl}/x`,
        {},
        undefined,
        5000,
        await settings(`proxy:\n  https: http://127.0.0.1:${proxy.port}\n`),
      ).catch((e: unknown) => e);
      expect(tlsCertificateErrorCode(tunnelled)).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
    } finally {
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
    }
  });

  it('min_tls_version tlsv1.3 refuses a TLS 1.2-only server', async () => {
    await expect(
      exchange('GET', `${tls12Url}/x`, {}, undefined, 5000, { ...noVerify, tls: { rejectUnauthorized: false, minVersion: 'TLSv1.3' } }),
    ).rejects.toThrow();
    expect((await exchange('GET', `${tls12Url}/x`, {}, undefined, 5000, noVerify)).status).toBe(200);
  });

  it('caps the body and bounds the time', async () => {
    await expect(exchange('GET', `${plainUrl}/big`, {}, undefined, 5000)).rejects.toBeInstanceOf(ResponseTooLargeError);
    await expect(exchange('GET', `${plainUrl}/slow`, {}, undefined, 100)).rejects.toThrow('no complete answer within 100 ms');
  });

  it('enroll: a TLS certificate error is TLS_UNTRUSTED (exit 5), tried once, with the NODE_EXTRA_CA_CERTS hint', async () => {
    const err = (await enroll(
      {
        baseUrl: tlsUrl,
        apiKey: 'k',
        appKey: 'a',
        apiKeyOnly: false,
        flavor: 'private_action_runner',
        runnerNamePrefix: 'h',
        hostname: 'h',
        publicKeyPem: 'x',
        version: '1.0.0',
        extraHeaders: {},
        now: new Date(),
      },
      { deadline: Deadline.after(10_000), policy: { initialDelayMs: 1, maxDelayMs: 1, random: () => 0 } },
    ).catch((e: unknown) => e)) as { code: string; exitCode: number; hint: string; message: string };
    expect(err.code).toBe('TLS_UNTRUSTED');
    expect(err.exitCode).toBe(5);
    expect(err.hint).toContain('NODE_EXTRA_CA_CERTS');
    expect(err.message).toMatch(/TLS certificate of 127\.0\.0\.1:\d+ not trusted \((SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO)/);
  });
});

describe("enroll waits on the run's clock", () => {
  it("every retry wait is the deadline clock's: a fake clock runs the whole loop without real sleeping", async () => {
    const busy = createHttpServer((_req, res) => {
      res.writeHead(503, { 'Retry-After': '2' });
      res.end();
    });
    const url = await listen(busy, 'http');
    let now = Date.UTC(2025, 0, 2);
    const sleeps: number[] = [];
    const clock: Clock = {
      now: () => now,
      sleep: async (ms) => {
        sleeps.push(ms);
        now += ms;
      },
    };
    try {
      const started = Date.now();
      const err = (await enroll(
        {
          baseUrl: url,
          apiKey: 'k',
          appKey: 'a',
          apiKeyOnly: false,
          flavor: 'private_action_runner',
          runnerNamePrefix: 'h',
          hostname: 'h',
          publicKeyPem: 'x',
          version: '1.0.0',
          extraHeaders: {},
          now: new Date(now),
        },
        { deadline: Deadline.after(10_000, clock), policy: { initialDelayMs: 1_000, maxDelayMs: 30_000, random: () => 0 } },
      ).catch((e: unknown) => e)) as { code: string; message: string };
      expect(err.code).toBe('ENROLL_TIMEOUT');
      // Retry-After 2 s over backoffs of 0.5, 1, 2 s; the fourth wait (4 s) would reach the deadline.
      expect(sleeps).toEqual([2_000, 2_000, 2_000]);
      expect(err.message).toContain('within 10 s (4 attempts; last: HTTP 503)');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      busy.closeAllConnections();
      await new Promise((r) => busy.close(r));
    }
  });
});
