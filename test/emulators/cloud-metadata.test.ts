import { afterEach, describe, expect, it } from 'vitest';
import { type CloudMetadataEmulator, closedLoopbackUrl, startCloudMetadataEmulator } from '../../emulators/cloud-metadata/index.js';

let emu: CloudMetadataEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(`${emu!.url}${path}`, init);
  return { status: res.status, body: await res.text() };
}

describe('cloud metadata emulator', () => {
  it('EC2 answers IMDSv1, and IMDSv2 with a session token', async () => {
    emu = await startCloudMetadataEmulator({ ec2: { instanceId: 'i-0abc123def4567890' } });
    expect(await call('/latest/meta-data/instance-id')).toEqual({ status: 200, body: 'i-0abc123def4567890' });
    const token = await call('/latest/api/token', { method: 'PUT', headers: { 'X-aws-ec2-metadata-token-ttl-seconds': '21600' } });
    expect(token.status).toBe(200);
    expect(await call('/latest/meta-data/instance-id', { headers: { 'X-aws-ec2-metadata-token': token.body } })).toEqual({
      status: 200,
      body: 'i-0abc123def4567890',
    });
    expect((await call('/latest/meta-data/instance-id', { headers: { 'X-aws-ec2-metadata-token': 'forged' } })).status).toBe(401);
    expect((await call('/latest/api/token', { method: 'PUT' })).status).toBe(400);
  });

  it('EC2 with IMDSv2 required refuses v1; v1-only has no token endpoint', async () => {
    emu = await startCloudMetadataEmulator({ ec2: { instanceId: 'i-1', imdsv2: 'required' } });
    expect((await call('/latest/meta-data/instance-id')).status).toBe(401);
    emu.set({ ec2: { instanceId: 'i-1', imdsv2: 'v1-only' } });
    expect((await call('/latest/api/token', { method: 'PUT', headers: { 'X-aws-ec2-metadata-token-ttl-seconds': '60' } })).status).toBe(
      404,
    );
    expect((await call('/latest/meta-data/instance-id')).status).toBe(200);
  });

  it('GCE needs Metadata-Flavor: Google; Azure needs Metadata: true and an api-version', async () => {
    emu = await startCloudMetadataEmulator({
      gce: { hostname: 'vm1.c.proj.internal' },
      azure: { vmId: 'vm-id', name: 'vm1', resourceGroupName: 'rg', subscriptionId: 'sub' },
    });
    expect((await call('/computeMetadata/v1/instance/hostname')).status).toBe(403);
    expect(await call('/computeMetadata/v1/instance/hostname', { headers: { 'Metadata-Flavor': 'Google' } })).toEqual({
      status: 200,
      body: 'vm1.c.proj.internal',
    });
    expect((await call('/metadata/instance/compute?api-version=2017-08-01')).status).toBe(400);
    expect((await call('/metadata/instance/compute', { headers: { Metadata: 'true' } })).status).toBe(400);
    const azure = await call('/metadata/instance/compute?api-version=2017-08-01', { headers: { Metadata: 'true' } });
    expect(JSON.parse(azure.body)).toMatchObject({ vmId: 'vm-id', name: 'vm1', resourceGroupName: 'rg', subscriptionId: 'sub' });
  });

  it('an absent provider answers 404 and every request is logged with its provider', async () => {
    emu = await startCloudMetadataEmulator({});
    expect((await call('/latest/meta-data/instance-id')).status).toBe(404);
    expect((await call('/computeMetadata/v1/instance/hostname', { headers: { 'Metadata-Flavor': 'Google' } })).status).toBe(404);
    expect(emu.requests.map((r) => [r.provider, r.status])).toEqual([
      ['ec2', 404],
      ['gce', 404],
    ]);
  });

  it('a slow provider can be outwaited by a client timeout', async () => {
    emu = await startCloudMetadataEmulator({ gce: { hostname: 'slow' }, delayMs: { gce: 5_000 } });
    await expect(
      fetch(`${emu.url}/computeMetadata/v1/instance/hostname`, {
        headers: { 'Metadata-Flavor': 'Google' },
        signal: AbortSignal.timeout(100),
      }),
    ).rejects.toThrow();
  });

  it('closedLoopbackUrl refuses connections', async () => {
    const url = await closedLoopbackUrl();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await expect(fetch(`${url}/latest/meta-data/instance-id`)).rejects.toThrow();
  });
});
