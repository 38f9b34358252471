import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubeletEmulator, startKubeletEmulator } from '../../emulators/kubelet/index.js';

let emu: KubeletEmulator;
beforeAll(async () => {
  emu = await startKubeletEmulator({ nodeName: 'node-1', pods: ['a', 'b'], readOnlyPort: true });
});
afterAll(() => emu.close());

function get(scheme: 'https' | 'http', path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port: scheme === 'https' ? emu.httpsPort : emu.httpPort, path, headers };
    const onResponse = (res: import('node:http').IncomingMessage) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    };
    const req = scheme === 'https' ? httpsRequest({ ...options, ca: emu.caPem }, onResponse) : httpRequest(options, onResponse);
    req.on('error', reject);
    req.end();
  });
}

describe('kubelet emulator', () => {
  it('the secure port serves a certificate its CA file verifies, and wants the bearer token (401 otherwise)', async () => {
    expect((await get('https', '/spec')).status).toBe(401);
    expect((await get('https', '/spec', { Authorization: 'Bearer nope' })).status).toBe(401);
    expect((await get('https', '/spec', { Authorization: `Bearer ${emu.token}` })).status).toBe(200);
  });

  it("/pods lists the node's pods with spec.nodeName; /stats/summary names the node", async () => {
    const auth = { Authorization: `Bearer ${emu.token}` };
    const pods = JSON.parse((await get('https', '/pods', auth)).body) as {
      kind: string;
      items: { metadata: { name: string }; spec: { nodeName: string } }[];
    };
    expect(pods.kind).toBe('PodList');
    expect(pods.items.map((p) => [p.metadata.name, p.spec.nodeName])).toEqual([
      ['a', 'node-1'],
      ['b', 'node-1'],
    ]);
    expect(JSON.parse((await get('https', '/stats/summary', auth)).body).node.nodeName).toBe('node-1');
  });

  it('the read-only port answers without a token; scripted failures and bodies apply to both', async () => {
    expect((await get('http', '/pods')).status).toBe(200);
    emu.set({ failStatus: 403 });
    expect((await get('http', '/pods')).status).toBe(403);
    expect((await get('http', '/spec')).status).toBe(200);
    emu.set({ failStatus: 0, podsBody: 'null' });
    expect((await get('http', '/pods')).body).toBe('null');
    emu.set({ podsBody: undefined });
    expect(emu.requests.at(-1)).toMatchObject({ scheme: 'http', path: '/pods', status: 200 });
  });
});
