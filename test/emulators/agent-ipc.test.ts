import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentIpcEmulator, startAgentIpcEmulator } from '../../emulators/agent-ipc/index.js';

let emu: AgentIpcEmulator;
beforeAll(async () => {
  emu = await startAgentIpcEmulator({ hostname: 'i-0abc123' });
});
afterAll(() => emu.close());

function get(path: string, headers: Record<string, string>, clientCert = true): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: emu.port, path, headers, ca: emu.certPem, ...(clientCert ? { cert: emu.certPem, key: emu.certPem } : {}) },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('agent IPC emulator', () => {
  it('401 without a token, 403 with a wrong one', async () => {
    expect((await get('/agent/hostname', {})).status).toBe(401);
    expect((await get('/agent/hostname', { Authorization: 'Bearer nope' })).status).toBe(403);
  });

  it('answers the hostname as a JSON string, "" included, and the version object', async () => {
    const auth = { Authorization: `Bearer ${emu.token}` };
    expect(await get('/agent/hostname', auth)).toEqual({ status: 200, body: 'i-0abc123' });
    emu.set({ hostname: '' });
    expect(await get('/agent/hostname', auth)).toEqual({ status: 200, body: '' });
    expect(await get('/agent/version', auth)).toEqual({
      status: 200,
      body: { Major: 7, Minor: 66, Patch: 0, Pre: '', Meta: '', Commit: 'abc1234' },
    });
    emu.set({ version: null });
    expect((await get('/agent/version', auth)).status).toBe(404);
  });

  it('serves a certificate trusted through its own PEM and records the client certificate', async () => {
    emu.requests.length = 0;
    await get('/agent/hostname', { Authorization: `Bearer ${emu.token}` }, true);
    await get('/agent/hostname', { Authorization: `Bearer ${emu.token}` }, false);
    expect(emu.requests.map((r) => r.clientCert)).toEqual([true, false]);
    expect(emu.certPem).toMatch(/BEGIN CERTIFICATE[\s\S]*BEGIN PRIVATE KEY/);
  });
});
