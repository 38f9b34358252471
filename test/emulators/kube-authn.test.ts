import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBE_EMULATOR_DNS_NAME, type KubeEmulator, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';

// How the emulator authenticates and what it records of it: the conformance test of the Kubernetes
// client (test/e2e/kubeconfig-conformance.test.ts) compares kubectl and par-identity by these records.

let emu: KubeEmulator;
beforeAll(async () => {
  emu = await startKubeEmulator({ clientCertificates: true });
  seedNamespaces(emu, ['team']);
});
afterAll(() => emu.close());

interface Sent {
  headers?: Record<string, string | string[]>;
  cert?: string;
  key?: string;
  servername?: string;
}

/** One GET of /api/v1/namespaces/team/secrets over node:https, trusting the emulator's CA. */
function get(sent: Sent): Promise<number> {
  const url = new URL(`${emu.url}/api/v1/namespaces/team/secrets`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        ca: emu.caCert,
        headers: sent.headers ?? {},
        agent: false,
        ...(sent.cert ? { cert: sent.cert, key: sent.key } : {}),
        ...(sent.servername ? { servername: sent.servername } : {}),
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.once('error', reject);
    req.end();
  });
}

describe('authentication as the apiserver does it', () => {
  it('a client certificate of the client CA: its common name is the user, its organisations the groups', async () => {
    const { cert, key } = await emu.issueClientCertificate('alice', {
      groups: ['devs', 'ops'],
      namespace: 'team',
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
    });
    expect(await get({ cert, key })).toBe(200);
    expect(emu.requests.at(-1)).toMatchObject({
      user: 'alice',
      groups: ['devs', 'ops', 'system:authenticated'],
      credential: 'x509',
      status: 200,
    });
  });

  it('the certificate is checked before the bearer token, as the apiserver orders its authenticators', async () => {
    const { cert, key } = await emu.issueClientCertificate('carol');
    expect(await get({ cert, key, headers: { authorization: `Bearer ${emu.adminToken}` } })).toBe(403);
    expect(emu.requests.at(-1)).toMatchObject({ user: 'carol', credential: 'x509' });
  });

  it('a bearer token, basic auth (refused, as since Kubernetes 1.19), nothing', async () => {
    expect(await get({ headers: { authorization: `Bearer ${emu.adminToken}` } })).toBe(200);
    expect(emu.requests.at(-1)).toMatchObject({
      user: 'kubernetes-admin',
      credential: 'bearer',
      groups: ['system:masters', 'system:authenticated'],
    });
    expect(await get({ headers: { authorization: `Basic ${Buffer.from('bob:pw').toString('base64')}` } })).toBe(401);
    expect(emu.requests.at(-1)).toMatchObject({ user: '', credential: 'basic', basicUser: 'bob' });
    expect(await get({})).toBe(401);
    expect(emu.requests.at(-1)).toMatchObject({ credential: 'none' });
  });

  it('records the TLS server name the client asked for', async () => {
    expect(await get({ headers: { authorization: `Bearer ${emu.adminToken}` }, servername: KUBE_EMULATOR_DNS_NAME })).toBe(200);
    expect(emu.requests.at(-1)?.serverName).toBe(KUBE_EMULATOR_DNS_NAME);
    await get({ headers: { authorization: `Bearer ${emu.adminToken}` } });
    expect(emu.requests.at(-1)?.serverName).toBe('');
  });

  it('impersonation: every header recorded, and each needs the impersonate verb on its kind', async () => {
    const impersonating = {
      'impersonate-user': 'dave',
      'impersonate-group': ['g1', 'g2'],
      'impersonate-uid': '42',
      'impersonate-extra-scopes': ['a', 'b'],
      'impersonate-extra-weird%20key%2fx': 'v',
    };
    expect(await get({ headers: { authorization: `Bearer ${emu.adminToken}`, ...impersonating } })).toBe(403);
    expect(emu.requests.at(-1)).toMatchObject({
      user: 'dave',
      groups: ['g1', 'g2', 'system:authenticated'],
      impersonate: { user: 'dave', groups: ['g1', 'g2'], uid: '42', extra: { scopes: ['a', 'b'], 'weird key/x': ['v'] } },
    });
    emu.addToken('limited', { user: 'limited', rules: [{ apiGroups: [''], resources: ['users', 'groups'], verbs: ['impersonate'] }] });
    expect(await get({ headers: { authorization: 'Bearer limited', ...impersonating } })).toBe(403);
    expect(emu.requests.at(-1)).toMatchObject({ user: '', status: 403 });
    emu.addToken('limited', {
      rules: [
        {
          apiGroups: ['authentication.k8s.io'],
          resources: ['uids', 'userextras/scopes', 'userextras/weird key/x'],
          verbs: ['impersonate'],
        },
      ],
    });
    expect(await get({ headers: { authorization: 'Bearer limited', ...impersonating, 'impersonate-group': ['system:masters'] } })).toBe(
      200,
    );
    expect(emu.requests.at(-1)).toMatchObject({ user: 'dave', groups: ['system:masters', 'system:authenticated'] });
  });
});
