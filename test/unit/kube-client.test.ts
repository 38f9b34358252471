import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeAuth } from '../../src/kube/kube-auth.js';
import { makeClient } from '../../src/kube/kube-clients.js';
import { kubeFailure } from '../../src/kube/kube-errors.js';
import { MAX_EXEC_OUTPUT_BYTES, runExecPlugin } from '../../src/kube/kube-exec-plugin.js';
import { proxyFor } from '../../src/kube/kube-proxy.js';
import { goNoProxyExempts } from '../../src/net/no-proxy.js';
import { KubeTransport, kubeServerUrl } from '../../src/kube/kube-transport.js';
import { confirmUsable, type KubeCluster, type KubeExecConfig, type KubeUser, parseKubeconfig } from '../../src/kube/kubeconfig.js';
import { readLines } from '../../src/reload/strict-watch.js';
import { Deadline, systemClock } from '../../src/time/index.js';

// The parts of the Kubernetes client the conformance test (test/e2e/kubeconfig-conformance.test.ts)
// cannot reach through kubectl: what kubectl does not do (plugin limits, answer caps), rules shown on
// more values than a kubectl run each (NO_PROXY, YAML typing), and the refresh rules (clock-driven).

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-kube-client-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const cluster = (over: Partial<KubeCluster> = {}): KubeCluster => ({
  name: 'c',
  server: 'https://127.0.0.1:6443',
  insecureSkipTlsVerify: false,
  disableCompression: false,
  extensions: {},
  ignoredKeys: [],
  ...over,
});
const user = (over: Partial<KubeUser> = {}): KubeUser => ({
  name: 'u',
  impersonateGroups: [],
  impersonateUserExtra: {},
  ignoredKeys: [],
  ...over,
});
const doc = (userYaml: string) => `clusters:\n- name: c\n  cluster:\n    server: https://a\nusers:\n- name: u\n  user:\n${userYaml}\n`;

describe('the kubeconfig as kubectl reads it', () => {
  it('YAML 1.1 scalars (yes/on/y are booleans), a timestamp-looking value stays a string, a key given twice keeps the last', async () => {
    const data = await parseKubeconfig(
      'clusters:\n- name: c\n  cluster:\n    server: https://a\n    server: https://b\n    insecure-skip-tls-verify: on\n    tls-server-name: 2001-12-14\n',
      '/k',
    );
    expect(data.clusters[0]).toMatchObject({ server: 'https://b', insecureSkipTlsVerify: true, tlsServerName: '2001-12-14' });
    await expect(parseKubeconfig(doc('    token: yes'), '/k')).rejects.toThrow('users[0].user.token must be a string, not boolean');
  });

  it('every known field has its JSON type; unknown ones are ignored and listed', async () => {
    await expect(parseKubeconfig(doc('    token: 0777'), '/k')).rejects.toThrow('must be a string, not number');
    await expect(parseKubeconfig(doc('    as-groups: admins'), '/k')).rejects.toThrow('as-groups must be a list of strings');
    await expect(parseKubeconfig(doc('    exec: {command: x, args: [1]}'), '/k')).rejects.toThrow('exec.args[0] must be a string');
    await expect(parseKubeconfig('clusters:\n- name: 1\n  cluster: {server: x}\n', '/k')).rejects.toThrow(
      'clusters[0].name must be a string',
    );
    await expect(parseKubeconfig('current-context: 5\n', '/k')).rejects.toThrow('current-context must be a string');
    await expect(parseKubeconfig('- a\n', '/k')).rejects.toThrow('must hold a mapping');
    const data = await parseKubeconfig(doc('    token: t\n    token-file: /x\n    Token: T'), '/k');
    expect(data.users[0]).toMatchObject({ token: 't', ignoredKeys: ['token-file', 'Token'] });
  });

  it('*-data is strict base64 (Go: padding required, line breaks allowed), decoded', async () => {
    expect(
      (await parseKubeconfig(doc('    client-certificate-data: "YWJj\\nZGVm"'), '/k')).users[0]!.clientCertificateData?.toString(),
    ).toBe('abcdef');
    await expect(parseKubeconfig(doc('    client-certificate-data: "YWJ"'), '/k')).rejects.toThrow('not valid base64');
    await expect(parseKubeconfig(doc('    client-key-data: "!!!!"'), '/k')).rejects.toThrow('not valid base64');
  });

  it('a name twice in one list is an error; an empty file, a null document and a BOM are fine; only the first document counts', async () => {
    await expect(parseKubeconfig('users:\n- name: u\n- name: u\n', '/k')).rejects.toThrow('"u" is defined twice');
    expect((await parseKubeconfig('', '/k')).clusters).toEqual([]);
    expect((await parseKubeconfig('~\n', '/k')).users).toEqual([]);
    expect((await parseKubeconfig('\uFEFFcurrent-context: x\n---\ncurrent-context: y\n', '/k')).currentContext).toBe('x');
  });

  it('paths relative to the file: certificate-authority, client-certificate, client-key, tokenFile, an exec command with a separator', async () => {
    const data = await parseKubeconfig(
      'clusters:\n- name: c\n  cluster: {server: x, certificate-authority: ca.pem}\nusers:\n- name: u\n  user: {client-certificate: ../c.pem, client-key: /abs/k.pem, tokenFile: t, exec: {command: bin/p, apiVersion: client.authentication.k8s.io/v1beta1}}\n- name: v\n  user: {exec: {command: plugin}}\n',
      '/k/dir',
    );
    expect(data.clusters[0]!.certificateAuthority).toBe('/k/dir/ca.pem');
    expect(data.users[0]).toMatchObject({
      clientCertificate: '/k/c.pem',
      clientKey: '/abs/k.pem',
      tokenFile: '/k/dir/t',
      exec: { command: '/k/dir/bin/p', interactiveMode: 'IfAvailable' },
    });
    expect(data.users[1]!.exec).toMatchObject({ command: 'plugin', interactiveMode: '' });
  });

  it('confirmUsable: kubectl’s checks of the context it uses', () => {
    expect(confirmUsable(cluster(), user({ token: 't' }))).toEqual([]);
    expect(confirmUsable(cluster({ proxyUrl: 'socks4://p:1' }), undefined)[0]).toContain('unsupported scheme "socks4"');
    expect(confirmUsable(cluster({ proxyUrl: 'not a url' }), undefined)[0]).toContain("invalid 'proxy-url'");
    expect(confirmUsable(cluster({ proxyUrl: 'ftp://user:s3cret@p:1' }), undefined)).toEqual([
      'invalid \'proxy-url\' "ftp://…@p:1" for cluster "c": unsupported scheme "ftp", must be http, https, or socks5',
    ]);
    expect(
      confirmUsable(
        cluster(),
        user({
          exec: {
            command: 'x',
            args: [],
            env: [{ name: '', value: 'v' }],
            apiVersion: 'client.authentication.k8s.io/v1',
            installHint: '',
            provideClusterInfo: false,
            interactiveMode: 'Sometimes',
          },
        }),
      ),
    ).toEqual([
      'env variable name must be specified for u to use exec authentication plugin',
      'invalid interactiveMode for u: "Sometimes"',
    ]);
    expect(
      confirmUsable(
        cluster(),
        user({
          exec: { command: '', args: [], env: [], apiVersion: '', installHint: '', provideClusterInfo: false, interactiveMode: 'Never' },
          authProvider: { name: 'oidc', config: {} },
        }),
      ),
    ).toHaveLength(3);
  });

  it('a server without a scheme is https with a CA, a client certificate or insecure-skip-tls-verify, else http (client-go DefaultServerURL)', () => {
    expect(kubeServerUrl(cluster({ server: '10.0.0.1:6443', certificateAuthority: '/ca' })).href).toBe('https://10.0.0.1:6443/');
    expect(kubeServerUrl(cluster({ server: '10.0.0.1:6443' }), user({ clientCertificate: '/c' })).protocol).toBe('https:');
    expect(kubeServerUrl(cluster({ server: '10.0.0.1:8080' })).protocol).toBe('http:');
    expect(kubeServerUrl(cluster({ server: 'https://h/prefix/' })).href).toBe('https://h/prefix');
  });
});

describe('proxies as Go picks them', () => {
  it.each([
    ['', 'api.example.com', '443', false],
    ['*', 'api.example.com', '443', true],
    ['example.com', 'api.example.com', '443', true],
    ['example.com', 'example.com', '443', true],
    ['.example.com', 'example.com', '443', false],
    ['.example.com', 'api.example.com', '443', true],
    ['*.example.com', 'api.example.com', '443', true],
    ['example.com:6443', 'api.example.com', '443', false],
    ['example.com:6443', 'api.example.com', '6443', true],
    ['notexample.com', 'example.com', '443', false],
    [' Example.COM , other', 'API.example.com', '443', true],
    ['10.0.0.0/8', '10.1.2.3', '443', true],
    ['10.0.0.0/8', '11.1.2.3', '443', false],
    ['10.1.2.3', '10.1.2.3', '443', true],
    ['10.1.2.3:80', '10.1.2.3', '443', false],
    ['[2001:db8::1]:443', '[2001:db8::1]', '443', true],
    ['2001:db8::/32', '2001:db8::5', '443', true],
    ['', 'localhost', '443', true],
    ['', '127.3.4.5', '443', true],
    ['', '[::1]', '443', true],
  ])('NO_PROXY=%j, %s:%s exempt: %s', (noProxy, host, port, exempt) => {
    expect(goNoProxyExempts(noProxy, host, port)).toBe(exempt);
  });

  it('proxy-url before the environment; HTTPS_PROXY before https_proxy; HTTP_PROXY for http servers, not under CGI; a bare host:port is http', () => {
    const https = new URL('https://api.example.com:6443');
    expect(proxyFor(https, 'socks5://p:1080', { HTTPS_PROXY: 'http://e:1' })).toMatchObject({ source: 'proxy-url' });
    expect(proxyFor(https, undefined, { HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:1' })?.url.host).toBe('upper:1');
    expect(proxyFor(https, undefined, { https_proxy: 'proxy.corp:3128' })).toMatchObject({ source: 'https_proxy' });
    expect(proxyFor(https, undefined, { https_proxy: 'proxy.corp:3128' })?.url.href).toBe('http://proxy.corp:3128/');
    expect(proxyFor(https, undefined, { HTTP_PROXY: 'http://e:1' })).toBeUndefined();
    expect(proxyFor(new URL('http://api.example.com'), undefined, { HTTP_PROXY: 'http://e:1' })?.url.host).toBe('e:1');
    expect(proxyFor(new URL('http://api.example.com'), undefined, { HTTP_PROXY: 'http://e:1', REQUEST_METHOD: 'GET' })).toBeUndefined();
    expect(proxyFor(https, undefined, { HTTPS_PROXY: 'http://e:1', no_proxy: 'example.com' })).toBeUndefined();
  });
});

async function plugin(name: string, body: string): Promise<KubeExecConfig> {
  const path = join(dir, name);
  await writeFile(path, `#!${process.execPath}\n${body}\n`);
  await chmod(path, 0o755);
  return {
    command: path,
    args: [],
    env: [],
    apiVersion: 'client.authentication.k8s.io/v1',
    installHint: '',
    provideClusterInfo: false,
    interactiveMode: 'Never',
  };
}

const pidGone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

/** A clock that stands still: the deadline has exactly the 3 s it was made with when the plugin starts. */
const STILL = { now: () => 0, sleep: systemClock.sleep };

describe('the exec plugin: limits kubectl does not have', () => {
  it('is stopped when it gives no credential in time (here the command deadline), and says so', async () => {
    const pidFile = join(dir, 'hanging.pid');
    const exec = await plugin(
      'hanging',
      `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`,
    );
    // 3 s, not less: a loaded machine may take most of a second just to start the plugin's Node.
    const err = await runExecPlugin(exec, cluster(), undefined, {
      env: process.env,
      stdinIsTerminal: false,
      deadline: Deadline.after(3000, STILL),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'KUBE_CREDENTIALS',
      exitCode: 9,
      message: expect.stringMatching(/no credential within 3(\.0)? s \(the command deadline\); the plugin was stopped/),
    });
    const pid = Number(await readFile(pidFile, 'utf8'));
    await expect.poll(() => pidGone(pid)).toBe(true);
  });

  it(`is stopped when it writes more than ${MAX_EXEC_OUTPUT_BYTES / 1024 / 1024} MiB`, async () => {
    const exec = await plugin(
      'chatty',
      "const chunk = 'x'.repeat(65536); const write = () => { while (process.stdout.write(chunk)); process.stdout.once('drain', write); }; write();",
    );
    await expect(runExecPlugin(exec, cluster(), undefined, { env: process.env, stdinIsTerminal: false })).rejects.toMatchObject({
      code: 'KUBE_CREDENTIALS',
      message: expect.stringContaining('wrote more than 1 MiB'),
    });
  });

  it('its stderr ends up in the error, made safe to print', async () => {
    const exec = await plugin(
      'sad',
      "process.stderr.write('first\\nlogin failed: \\u001b[31mexpired\\u001b[0m \\u202e\\n'); process.exit(4);",
    );
    await expect(runExecPlugin(exec, cluster(), undefined, { env: process.env, stdinIsTerminal: false })).rejects.toMatchObject({
      message: expect.stringMatching(/failed with exit code 4: login failed: expired$/),
    });
  });

  it('a credential is reused until its expiry, and run again after a 401', async () => {
    const calls = join(dir, 'calls');
    const expiry = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
    const exec = await plugin(
      'counting',
      `require('node:fs').appendFileSync(${JSON.stringify(calls)}, 'x'); process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 't', expirationTimestamp: process.env.EXPIRY } }));`,
    );
    const runs = async () => (await readFile(calls, 'utf8').catch(() => '')).length;
    const auth = (expires: string) =>
      new KubeAuth(cluster(), user({ exec: { ...exec, env: [{ name: 'EXPIRY', value: expires }] } }), { env: process.env });
    const valid = auth(expiry(3600));
    const [a, b] = await Promise.all([valid.credentials(), valid.credentials()]);
    expect(a.headers.Authorization).toBe('Bearer t');
    expect(await runs()).toBe(1);
    await valid.credentials();
    expect(await runs()).toBe(1);
    valid.unauthorized(b);
    await valid.credentials();
    expect(await runs()).toBe(2);
    const expired = auth(expiry(-1));
    await expired.credentials();
    await expired.credentials();
    expect(await runs()).toBe(4);
  });
});

describe('files kubectl reads again', () => {
  it('tokenFile: trimmed, read again once a minute has (nearly) passed, the last token kept when the file goes', async () => {
    const file = join(dir, 'token');
    await writeFile(file, '  first\n');
    let now = 1_000_000;
    const auth = new KubeAuth(cluster(), user({ tokenFile: file }), { env: {}, now: () => now });
    expect((await auth.credentials()).headers.Authorization).toBe('Bearer first');
    await writeFile(file, 'second');
    now += 45_000;
    expect((await auth.credentials()).headers.Authorization).toBe('Bearer first');
    now += 10_000;
    expect((await auth.credentials()).headers.Authorization).toBe('Bearer second');
    await rm(file);
    now += 60_000;
    expect((await auth.credentials()).headers.Authorization).toBe('Bearer second');
  });

  it('impersonation headers, the user-extra key %-encoded as client-go does', async () => {
    const auth = new KubeAuth(
      cluster(),
      user({
        token: 't',
        impersonate: 'alice',
        impersonateUid: '7',
        impersonateGroups: ['a', 'b'],
        impersonateUserExtra: { 'scopes/ü x': ['1', '2'], empty: [] },
      }),
      { env: {} },
    );
    expect((await auth.credentials()).headers).toEqual({
      Authorization: 'Bearer t',
      'Impersonate-User': 'alice',
      'Impersonate-Uid': '7',
      'Impersonate-Group': ['a', 'b'],
      'Impersonate-Extra-scopes%2F%C3%BC%20x': ['1', '2'],
    });
  });

  it('over http:// nothing identifying is sent, as kubectl (impersonation is)', async () => {
    const auth = new KubeAuth(cluster({ server: 'http://127.0.0.1:8080' }), user({ token: 't', impersonate: 'alice' }), { env: {} });
    expect((await auth.credentials()).headers).toEqual({ 'Impersonate-User': 'alice' });
  });
});

describe('every answer read into memory is capped', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.writeHead(req.url?.includes('missing') ? 404 : 200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ kind: 'Secret', apiVersion: 'v1', metadata: { name: 'x', namespace: 'ns' }, data: { big: 'A'.repeat(8192) } }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('a typed API call whose answer is larger than the cap fails with KUBE_RESPONSE_TOO_LARGE', async () => {
    const transport = new KubeTransport({ cluster: cluster({ server: url }), env: {}, limits: {}, maxResponseBytes: 4096 });
    const k8s = await import('../../src/kube/client-node-api.js');
    const core = makeClient(k8s, transport, k8s.CoreV1Api);
    const err = await core.readNamespacedSecret({ name: 'x', namespace: 'ns' }).catch((e: unknown) => e);
    expect(kubeFailure(err, 'reading Secret ns/x', 'Nothing was changed.')).toMatchObject({
      code: 'KUBE_RESPONSE_TOO_LARGE',
      message: expect.stringContaining('more than 0.00390625 MiB'),
    });
    const fits = makeClient(k8s, new KubeTransport({ cluster: cluster({ server: url }), env: {}, limits: {} }), k8s.CoreV1Api);
    expect((await fits.readNamespacedSecret({ name: 'x', namespace: 'ns' })).metadata?.name).toBe('x');
    transport.close();
  });

  it('an error answer is read up to 64 KiB whatever the cap of successes', async () => {
    const transport = new KubeTransport({ cluster: cluster({ server: url }), env: {}, limits: {}, maxResponseBytes: 64 });
    const res = await transport.sendBuffered({ method: 'GET', path: '/missing' });
    expect(res.status).toBe(404);
    expect(res.body.length).toBeGreaterThan(8192);
    transport.close();
  });

  it('a watch line longer than its cap is refused without being kept', () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    let tooLong = 0;
    readLines(
      stream,
      (l) => lines.push(l),
      () => lines.push('<end>'),
      10,
      () => tooLong++,
    );
    stream.write('short\n0123456789abc');
    stream.end('\nnever\n');
    expect(lines).toEqual(['short']);
    expect(tooLong).toBe(1);
  });
});
