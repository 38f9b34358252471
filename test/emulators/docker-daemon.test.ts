import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DockerDaemonEmulator, startDockerDaemonEmulator } from '../../emulators/docker-daemon/index.js';

let emu: DockerDaemonEmulator;
beforeAll(async () => {
  emu = await startDockerDaemonEmulator({ name: 'host-9', apiVersion: '1.45' });
});
afterAll(() => emu.close());

function get(path: string): Promise<{ status: number; body: string; apiVersion?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: emu.socketPath!, path }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body,
          ...(typeof res.headers['api-version'] === 'string' ? { apiVersion: res.headers['api-version'] } : {}),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('docker daemon emulator', () => {
  it('listens on a unix socket named by its DOCKER_HOST', () => {
    expect(emu.dockerHost).toBe(`unix://${emu.socketPath}`);
  });

  it('/_ping gives the API version; /info and /v<version>/info the Name; a version above its own is refused', async () => {
    expect(await get('/_ping')).toMatchObject({ status: 200, body: 'OK', apiVersion: '1.45' });
    expect(JSON.parse((await get('/info')).body).Name).toBe('host-9');
    expect(JSON.parse((await get('/v1.45/info')).body).Name).toBe('host-9');
    expect((await get('/v1.99/info')).status).toBe(400);
    expect((await get('/containers/json')).status).toBe(404);
    emu.set({ failStatus: 500 });
    expect((await get('/info')).status).toBe(500);
    expect(emu.requests.map((r) => r.status)).toEqual([200, 200, 200, 400, 404, 500]);
  });
});
