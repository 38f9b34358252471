import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KUBE_EMULATOR_DNS_NAME,
  type KubeEmulator,
  type RecordedRequest,
  seedNamespaces,
  startKubeEmulator,
} from '../../emulators/kube/index.js';
import { servingCert } from '../../emulators/kube/tls.js';
import { resolveClusterTarget } from '../../src/kube/cluster-connection.js';
import { type LoopbackProxy, type SocksProxy, startLoopbackProxy, startSocksProxy } from '../fixtures/loopback-proxy.js';
import { identityData, newIdentity } from '../fixtures/test-identities.js';
import { runCli, startCli } from './run-cli.js';

// par-identity's Kubernetes client against kubectl, form by form (docs/kubernetes-client.md has the
// table): for each kubeconfig form kubectl supports, the same files and environment are handed to
// the real kubectl (`kubectl get --raw` of the identity Secret) and to the BUILT binary (`status
// --secret`, and `watch` until it loaded the identity), and compared on
// - the resolution: `kubectl config view --minify --raw --flatten` (files embedded, so relative paths
//   are proven resolved the same way) against what our reader picked;
// - what the Kubernetes API emulator saw of each request: how it authenticated (token, client
//   certificate, basic), as whom (user, groups, after impersonation), the TLS server name asked for;
// - what the proxy saw (CONNECT target and credentials, the SOCKS address), what the exec plugin saw
//   (its arguments, environment and KUBERNETES_EXEC_INFO);
// - for the forms kubectl refuses: that neither sends anything, and the error we give.
// kubectl: PAR_IDENTITY_TEST_KUBECTL, else the one on PATH (CI has 1.32; the table was made with 1.37).

const KUBECTL = process.env.PAR_IDENTITY_TEST_KUBECTL || whichKubectl();
const REQUIRED = process.env.CI === 'true';
const NS = 'datadog';
const SECRET = 'private-action-runner-identity';
const SECRET_PATH = `/api/v1/namespaces/${NS}/secrets/${SECRET}`;
const LIST_PATH = `/api/v1/namespaces/${NS}/secrets`;
const READ_SECRETS = { namespace: NS, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }] };

function whichKubectl(): string | undefined {
  try {
    return execFileSync('which', ['kubectl'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** kubectl reads the real service-account folder; a private mount namespace gives it our fake one. */
function canFakeServiceAccount(): boolean {
  return (
    spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', 'mount -t tmpfs tmpfs /var/run'], { stdio: 'ignore' })
      .status === 0
  );
}

interface Ctx {
  emu: KubeEmulator;
  dir: string;
  caPem: string;
  cert: { cert: string; key: string };
  execCert: { cert: string; key: string };
  oidcValid: string;
  oidcExpired: string;
  httpProxy: LoopbackProxy;
  httpsProxy: LoopbackProxy;
  socks: SocksProxy;
}

let ctx: Ctx;

interface Seen {
  code: number | null;
  stderr: string;
  /** How each request reached the API server: one entry per distinct identity. */
  requests: string[];
  proxy: string[];
  plugin: unknown[];
}

/** A request as the table compares it: credential, user, groups, TLS server name, impersonation. */
function identityOf(r: RecordedRequest): string {
  const parts = [
    `${r.credential}:${r.basicUser ?? r.user}`,
    `groups=${r.groups.filter((g) => g !== 'system:authenticated').join(',')}`,
    `sni=${r.serverName || '-'}`,
  ];
  if (r.impersonate) parts.push(`as=${JSON.stringify(r.impersonate)}`);
  return parts.join(' ');
}

interface Row {
  form: string;
  /** Writes the row's files under `home` (its own folder); returns the environment both clients get. */
  setup(home: string): Promise<Record<string, string>>;
  /** sent: both send the same requests; refused: kubectl refuses, and so do we with this code. */
  expect: { sent: true; answered?: 'ok' | 401; watch?: boolean } | { refused: string; says?: string } | { anonymous: string };
  /** The folder kubectl's relative tokenFile and exec command are relative to, when not the single kubeconfig's. */
  viewFolder?(home: string): string;
  /** What the user or plugin logs must also show (checked on both). */
  check?(seen: Seen): void;
}

function kubeconfig(doc: {
  cluster?: Record<string, unknown>;
  user?: Record<string, unknown>;
  context?: Record<string, unknown>;
  extra?: Record<string, unknown>;
}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: ctx.emu.url, 'certificate-authority': 'ca.pem', ...doc.cluster } }],
    users: [{ name: 'u', user: doc.user ?? {} }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: NS, ...doc.context } }],
    'current-context': 'x',
    ...doc.extra,
  });
}

/** The usual layout: <home>/kube/config with ca.pem beside it; KUBECONFIG points at it. */
async function single(home: string, text: string, files: Record<string, string> = {}): Promise<Record<string, string>> {
  const kube = join(home, 'kube');
  await mkdir(kube, { recursive: true });
  await writeFile(join(kube, 'ca.pem'), ctx.caPem);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(dirname(join(kube, name)), { recursive: true });
    await writeFile(join(kube, name), content, { mode: 0o600 });
  }
  await writeFile(join(kube, 'config'), text, { mode: 0o600 });
  return { KUBECONFIG: join(kube, 'config') };
}

const PLUGIN = (log: string) => `#!${process.execPath}
const fs = require('node:fs');
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ args: process.argv.slice(2), info: JSON.parse(process.env.KUBERNETES_EXEC_INFO || 'null'), x: process.env.PLUGIN_X ?? null, stdinTTY: process.stdin.isTTY === true }) + '\\n');
if (process.env.PLUGIN_MODE === 'fail') { process.stderr.write('plugin: no credential for you\\n'); process.exit(3); }
const status = process.env.PLUGIN_MODE === 'cert'
  ? { clientCertificateData: fs.readFileSync(process.env.PLUGIN_CERT, 'utf8'), clientKeyData: fs.readFileSync(process.env.PLUGIN_KEY, 'utf8') }
  : { token: 'tok-exec' };
process.stdout.write(JSON.stringify({ apiVersion: process.env.PLUGIN_API_VERSION, kind: 'ExecCredential', status }));
`;

/** An exec user whose plugin is <home>/kube/bin/plugin, named relative to the kubeconfig's folder. */
async function execRow(
  home: string,
  exec: Record<string, unknown>,
  mode = 'token',
  cluster: Record<string, unknown> = {},
): Promise<Record<string, string>> {
  const log = join(home, 'plugin.jsonl');
  const apiVersion = (exec.apiVersion as string | undefined) ?? 'client.authentication.k8s.io/v1';
  const env = [
    { name: 'PLUGIN_MODE', value: mode },
    { name: 'PLUGIN_X', value: 'from-the-kubeconfig' },
    { name: 'PLUGIN_API_VERSION', value: apiVersion },
    { name: 'PLUGIN_CERT', value: join(home, 'exec-cert.pem') },
    { name: 'PLUGIN_KEY', value: join(home, 'exec-key.pem') },
  ];
  await writeFile(join(home, 'exec-cert.pem'), ctx.execCert.cert);
  await writeFile(join(home, 'exec-key.pem'), ctx.execCert.key);
  const out = await single(
    home,
    kubeconfig({ cluster, user: { exec: { apiVersion, command: './bin/plugin', args: ['get-token', '--flag'], env, ...exec } } }),
    { 'bin/plugin': PLUGIN(log) },
  );
  await chmod(join(home, 'kube', 'bin', 'plugin'), 0o755);
  return out;
}

const jwt = (exp: number) =>
  `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'oidc-user', exp })).toString('base64url')}.c2ln`;

const ROWS: Row[] = [
  { form: 'token', setup: (h) => single(h, kubeconfig({ user: { token: 'tok-inline' } })), expect: { sent: true, watch: true } },
  {
    form: 'tokenFile, relative to the kubeconfig folder',
    setup: (h) => single(h, kubeconfig({ user: { tokenFile: 'token' } }), { token: 'tok-file\n' }),
    expect: { sent: true, watch: true },
    check: (s) => expect(s.requests).toEqual(['bearer:file-user groups= sni=-']),
  },
  {
    form: 'token and tokenFile: the file wins',
    setup: (h) => single(h, kubeconfig({ user: { token: 'tok-inline', tokenFile: 'token' } }), { token: 'tok-file' }),
    expect: { sent: true },
    check: (s) => expect(s.requests[0]).toContain('file-user'),
  },
  {
    form: 'tokenFile missing',
    setup: (h) => single(h, kubeconfig({ user: { tokenFile: 'no-such-token' } })),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'no-such-token' },
  },
  {
    form: 'token-file (client-node’s key, not kubectl’s): no credential',
    setup: (h) => single(h, kubeconfig({ user: { 'token-file': 'token' } }), { token: 'tok-file' }),
    expect: { anonymous: 'token-file' },
  },
  {
    form: 'client certificate and key, inline data',
    setup: (h) =>
      single(
        h,
        kubeconfig({
          user: {
            'client-certificate-data': Buffer.from(ctx.cert.cert).toString('base64'),
            'client-key-data': Buffer.from(ctx.cert.key).toString('base64'),
          },
        }),
      ),
    expect: { sent: true, watch: true },
    check: (s) => expect(s.requests).toEqual(['x509:cert-user groups=devs sni=-']),
  },
  {
    form: 'client certificate and key files, relative paths',
    setup: (h) =>
      single(h, kubeconfig({ user: { 'client-certificate': 'certs/user.pem', 'client-key': '../kube/certs/user.key' } }), {
        'certs/user.pem': ctx.cert.cert,
        'certs/user.key': ctx.cert.key,
      }),
    expect: { sent: true, watch: true },
  },
  {
    form: 'client certificate without its key',
    setup: (h) => single(h, kubeconfig({ user: { 'client-certificate': 'user.pem' } }), { 'user.pem': ctx.cert.cert }),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'client-key' },
  },
  {
    form: 'client certificate file missing',
    setup: (h) => single(h, kubeconfig({ user: { 'client-certificate': 'gone.pem', 'client-key': 'gone.key' } })),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'gone.pem' },
  },
  {
    form: 'client certificate and token: both sent',
    setup: (h) =>
      single(h, kubeconfig({ user: { 'client-certificate': 'user.pem', 'client-key': 'user.key', token: 'tok-inline' } }), {
        'user.pem': ctx.cert.cert,
        'user.key': ctx.cert.key,
      }),
    expect: { sent: true },
  },
  {
    form: 'basic auth (username, password)',
    setup: (h) => single(h, kubeconfig({ user: { username: 'bob', password: 'pw' } })),
    expect: { sent: true, answered: 401 },
  },
  {
    form: 'basic auth and token',
    setup: (h) => single(h, kubeconfig({ user: { username: 'bob', password: 'pw', token: 'tok-inline' } })),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'more than one authentication method' },
  },
  {
    form: 'exec plugin (v1, interactiveMode Never, relative command, args, env)',
    setup: (h) => execRow(h, { interactiveMode: 'Never' }),
    expect: { sent: true, watch: true },
    check: (s) =>
      expect(s.plugin[0]).toEqual({
        args: ['get-token', '--flag'],
        info: { kind: 'ExecCredential', apiVersion: 'client.authentication.k8s.io/v1', spec: { interactive: false } },
        x: 'from-the-kubeconfig',
        stdinTTY: false,
      }),
  },
  {
    form: 'exec plugin, provideClusterInfo (server, CA, tls-server-name, extension config)',
    setup: (h) =>
      execRow(h, { interactiveMode: 'IfAvailable', provideClusterInfo: true }, 'token', {
        'tls-server-name': KUBE_EMULATOR_DNS_NAME,
        extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { audience: 'par' } }],
      }),
    expect: { sent: true },
    check: (s) =>
      expect((s.plugin[0] as { info: { spec: { cluster: Record<string, unknown> } } }).info.spec.cluster).toMatchObject({
        server: ctx.emu.url,
        'tls-server-name': KUBE_EMULATOR_DNS_NAME,
        'certificate-authority-data': Buffer.from(ctx.caPem).toString('base64'),
        config: { audience: 'par' },
      }),
  },
  {
    form: 'exec plugin, v1beta1 (interactiveMode defaults to IfAvailable)',
    setup: (h) => execRow(h, { apiVersion: 'client.authentication.k8s.io/v1beta1' }),
    expect: { sent: true },
  },
  {
    form: 'exec plugin returning a client certificate',
    setup: (h) => execRow(h, { interactiveMode: 'Never' }, 'cert'),
    expect: { sent: true, watch: true },
    check: (s) => expect(s.requests[0]).toContain('x509:exec-cert-user'),
  },
  {
    form: 'exec plugin, interactiveMode Always without a terminal',
    setup: (h) => execRow(h, { interactiveMode: 'Always' }),
    expect: { refused: 'KUBE_CREDENTIALS', says: 'standard input is not a terminal' },
    check: (s) => expect(s.plugin).toEqual([]),
  },
  {
    form: 'exec plugin, v1 without interactiveMode',
    setup: (h) => execRow(h, {}),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'interactiveMode must be specified' },
  },
  {
    form: 'exec plugin, v1alpha1 (removed)',
    setup: (h) => execRow(h, { apiVersion: 'client.authentication.k8s.io/v1alpha1', interactiveMode: 'Never' }),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'invalid apiVersion' },
  },
  {
    form: 'exec plugin not installed (installHint)',
    setup: (h) => execRow(h, { interactiveMode: 'Never', command: 'no-such-plugin-x', installHint: 'install it with: brew install x' }),
    expect: { refused: 'KUBE_CREDENTIALS', says: 'brew install x' },
  },
  {
    form: 'exec plugin failing',
    setup: (h) => execRow(h, { interactiveMode: 'Never' }, 'fail'),
    expect: { refused: 'KUBE_CREDENTIALS', says: 'no credential for you' },
  },
  {
    form: 'exec plugin and token: the token, the plugin not run',
    setup: (h) =>
      single(
        h,
        kubeconfig({
          user: {
            token: 'tok-inline',
            exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'no-such-plugin-x', interactiveMode: 'Never' },
          },
        }),
      ),
    expect: { sent: true },
  },
  {
    form: 'tls-server-name',
    setup: (h) => single(h, kubeconfig({ cluster: { 'tls-server-name': KUBE_EMULATOR_DNS_NAME }, user: { token: 'tok-inline' } })),
    expect: { sent: true, watch: true },
    check: (s) => expect(s.requests[0]).toContain(`sni=${KUBE_EMULATOR_DNS_NAME}`),
  },
  {
    form: 'tls-server-name the certificate does not have',
    setup: (h) => single(h, kubeconfig({ cluster: { 'tls-server-name': 'other.test' }, user: { token: 'tok-inline' } })),
    expect: { refused: 'KUBE_TLS_UNTRUSTED' },
  },
  {
    form: 'insecure-skip-tls-verify',
    setup: (h) =>
      single(
        h,
        kubeconfig({ cluster: { 'certificate-authority': null, 'insecure-skip-tls-verify': true }, user: { token: 'tok-inline' } }),
      ),
    expect: { sent: true, watch: true },
  },
  {
    form: 'insecure-skip-tls-verify: yes (YAML 1.1, as kubectl reads it)',
    setup: (h) =>
      single(
        h,
        kubeconfig({ cluster: { 'certificate-authority': null }, user: { token: 'tok-inline' } }).replace(
          'server:',
          'insecure-skip-tls-verify: yes\n      server:',
        ),
      ),
    expect: { sent: true },
  },
  {
    form: 'insecure-skip-tls-verify: "true" (a string)',
    setup: (h) =>
      single(
        h,
        kubeconfig({ cluster: { 'certificate-authority': null, 'insecure-skip-tls-verify': 'true' }, user: { token: 'tok-inline' } }),
      ),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'insecure-skip-tls-verify' },
  },
  {
    form: 'insecure-skip-tls-verify with a CA',
    setup: (h) => single(h, kubeconfig({ cluster: { 'insecure-skip-tls-verify': true }, user: { token: 'tok-inline' } })),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'insecure flag' },
  },
  {
    form: 'no CA: the system roots',
    setup: (h) => single(h, kubeconfig({ cluster: { 'certificate-authority': null }, user: { token: 'tok-inline' } })),
    expect: { refused: 'KUBE_TLS_UNTRUSTED' },
  },
  {
    form: 'certificate-authority-data',
    setup: (h) =>
      single(
        h,
        kubeconfig({
          cluster: { 'certificate-authority': null, 'certificate-authority-data': Buffer.from(ctx.caPem).toString('base64') },
          user: { token: 'tok-inline' },
        }),
      ),
    expect: { sent: true },
  },
  {
    form: 'certificate-authority and -data both',
    setup: (h) =>
      single(
        h,
        kubeconfig({ cluster: { 'certificate-authority-data': Buffer.from(ctx.caPem).toString('base64') }, user: { token: 'tok-inline' } }),
      ),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'both specified' },
  },
  {
    form: 'proxy-url http (with credentials), server by name',
    setup: (h) =>
      single(
        h,
        kubeconfig({
          cluster: {
            server: ctx.emu.url.replace('127.0.0.1', KUBE_EMULATOR_DNS_NAME),
            'proxy-url': ctx.httpProxy.url.replace('://', '://puser:ppw@'),
          },
          user: { token: 'tok-inline' },
        }),
      ),
    expect: { sent: true, watch: true },
    check: (s) =>
      expect(s.proxy).toEqual([
        `CONNECT ${KUBE_EMULATOR_DNS_NAME}:${new URL(ctx.emu.url).port} Basic ${Buffer.from('puser:ppw').toString('base64')}`,
      ]),
  },
  {
    form: 'proxy-url https (verified with the cluster CA)',
    setup: (h) =>
      single(
        h,
        kubeconfig({
          cluster: { server: ctx.emu.url.replace('127.0.0.1', KUBE_EMULATOR_DNS_NAME), 'proxy-url': ctx.httpsProxy.url },
          user: { token: 'tok-inline' },
        }),
      ),
    expect: { sent: true },
    check: (s) => expect(s.proxy).toHaveLength(1),
  },
  {
    form: 'proxy-url socks5, server by name',
    setup: (h) =>
      single(
        h,
        kubeconfig({
          cluster: { server: ctx.emu.url.replace('127.0.0.1', KUBE_EMULATOR_DNS_NAME), 'proxy-url': ctx.socks.url },
          user: { token: 'tok-inline' },
        }),
      ),
    expect: { sent: true, watch: true },
    check: (s) => expect(s.proxy).toEqual([`SOCKS host ${KUBE_EMULATOR_DNS_NAME}:${new URL(ctx.emu.url).port}`]),
  },
  {
    form: 'proxy-url socks5, server by address',
    setup: (h) => single(h, kubeconfig({ cluster: { 'proxy-url': ctx.socks.url }, user: { token: 'tok-inline' } })),
    expect: { sent: true },
    check: (s) => expect(s.proxy).toEqual([`SOCKS ipv4 127.0.0.1:${new URL(ctx.emu.url).port}`]),
  },
  {
    form: 'proxy-url of another scheme',
    setup: (h) => single(h, kubeconfig({ cluster: { 'proxy-url': 'ftp://127.0.0.1:1' }, user: { token: 'tok-inline' } })),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'unsupported scheme' },
  },
  {
    form: 'HTTPS_PROXY, server by name',
    setup: async (h) => ({
      ...(await single(
        h,
        kubeconfig({ cluster: { server: ctx.emu.url.replace('127.0.0.1', KUBE_EMULATOR_DNS_NAME) }, user: { token: 'tok-inline' } }),
      )),
      HTTPS_PROXY: ctx.httpProxy.url,
    }),
    expect: { sent: true },
    check: (s) => expect(s.proxy).toEqual([`CONNECT ${KUBE_EMULATOR_DNS_NAME}:${new URL(ctx.emu.url).port} -`]),
  },
  {
    form: 'HTTPS_PROXY, loopback server: not proxied',
    setup: async (h) => ({ ...(await single(h, kubeconfig({ user: { token: 'tok-inline' } }))), HTTPS_PROXY: ctx.httpProxy.url }),
    expect: { sent: true },
    check: (s) => expect(s.proxy).toEqual([]),
  },
  {
    form: 'HTTPS_PROXY with NO_PROXY=.test: not proxied (the name does not resolve)',
    setup: async (h) => ({
      ...(await single(
        h,
        kubeconfig({ cluster: { server: ctx.emu.url.replace('127.0.0.1', KUBE_EMULATOR_DNS_NAME) }, user: { token: 'tok-inline' } }),
      )),
      HTTPS_PROXY: ctx.httpProxy.url,
      NO_PROXY: '.test',
    }),
    expect: { refused: 'KUBE_UNREACHABLE' },
    check: (s) => expect(s.proxy).toEqual([]),
  },
  {
    form: 'impersonation: as, as-groups, as-uid, as-user-extra',
    setup: (h) =>
      single(
        h,
        kubeconfig({
          user: {
            token: 'tok-impersonator',
            as: 'alice',
            'as-groups': ['system:masters', 'devs'],
            'as-uid': 'uid-42',
            'as-user-extra': { scopes: ['read', 'write'], 'team/name': ['par'] },
          },
        }),
      ),
    expect: { sent: true, watch: true },
    check: (s) => expect(s.requests[0]).toContain('as={"user":"alice"'),
  },
  {
    form: 'as-groups without as',
    setup: (h) => single(h, kubeconfig({ user: { token: 'tok-inline', 'as-groups': ['devs'] } })),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'without impersonating a user' },
  },
  {
    form: 'merged KUBECONFIG: a name in two files is the first file’s entry, whole',
    setup: async (h) => {
      await mkdir(join(h, 'a'), { recursive: true });
      await mkdir(join(h, 'b'), { recursive: true });
      await writeFile(join(h, 'a', 'ca.pem'), ctx.caPem);
      const a = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: ctx.emu.url, 'certificate-authority': 'ca.pem' } }],
        users: [{ name: 'shared', user: { token: 'tok-inline' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'shared' } }],
        'current-context': 'x',
      };
      const b = {
        apiVersion: 'v1',
        kind: 'Config',
        users: [{ name: 'shared', user: { tokenFile: 'token', as: 'mallory' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'other' } }],
        'current-context': 'other',
      };
      await writeFile(join(h, 'a', 'config'), stringify(a));
      await writeFile(join(h, 'b', 'config'), stringify(b));
      await writeFile(join(h, 'b', 'token'), 'tok-file');
      return { KUBECONFIG: [join(h, 'missing'), join(h, 'a', 'config'), join(h, 'b', 'config')].join(':') };
    },
    expect: { sent: true, watch: true },
    check: (s) => expect(s.requests).toEqual(['bearer:token-user groups= sni=-']),
  },
  {
    form: 'merged KUBECONFIG: an entry of the second file, its paths relative to its own folder',
    setup: async (h) => {
      await mkdir(join(h, 'a'), { recursive: true });
      await mkdir(join(h, 'b'), { recursive: true });
      await writeFile(join(h, 'b', 'ca.pem'), ctx.caPem);
      const a = {
        apiVersion: 'v1',
        kind: 'Config',
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'b-only' } }],
        'current-context': 'x',
      };
      const b = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: ctx.emu.url, 'certificate-authority': 'ca.pem' } }],
        users: [{ name: 'b-only', user: { tokenFile: 'token' } }],
      };
      await writeFile(join(h, 'a', 'config'), stringify(a));
      await writeFile(join(h, 'b', 'config'), stringify(b));
      await writeFile(join(h, 'b', 'token'), 'tok-file');
      return { KUBECONFIG: [join(h, 'a', 'config'), join(h, 'b', 'config')].join(':') };
    },
    viewFolder: (h) => join(h, 'b'),
    expect: { sent: true },
    check: (s) => expect(s.requests).toEqual(['bearer:file-user groups= sni=-']),
  },
  {
    form: 'auth-provider gcp (removed from kubectl)',
    setup: (h) => single(h, kubeconfig({ user: { 'auth-provider': { name: 'gcp', config: { 'access-token': 'x' } } } })),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'gke-gcloud-auth-plugin' },
  },
  {
    form: 'auth-provider azure (removed from kubectl)',
    setup: (h) => single(h, kubeconfig({ user: { 'auth-provider': { name: 'azure', config: { 'access-token': 'x' } } } })),
    expect: { refused: 'KUBE_NOT_CONFIGURED', says: 'Azure/kubelogin' },
  },
  {
    form: 'auth-provider oidc with a valid id-token',
    setup: (h) =>
      single(
        h,
        kubeconfig({
          user: {
            'auth-provider': {
              name: 'oidc',
              config: { 'id-token': ctx.oidcValid, 'client-id': 'par', 'idp-issuer-url': 'https://127.0.0.1:9' },
            },
          },
        }),
      ),
    expect: { sent: true },
    check: (s) => expect(s.requests[0]).toContain('oidc-user'),
  },
  {
    form: 'auth-provider oidc with an expired id-token (kubectl refreshes it; we name kubelogin)',
    setup: (h) =>
      single(
        h,
        kubeconfig({
          user: {
            'auth-provider': {
              name: 'oidc',
              config: { 'id-token': ctx.oidcExpired, 'refresh-token': 'r', 'client-id': 'par', 'idp-issuer-url': 'https://127.0.0.1:9' },
            },
          },
        }),
      ),
    expect: { refused: 'KUBE_CREDENTIALS', says: 'kubelogin' },
  },
];

/** Runs kubectl with `env`, in another folder than the kubeconfig's (relative paths must not follow the working directory). */
function kubectl(
  home: string,
  env: Record<string, string>,
  args: string[],
  wrap: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cwd = join(home, 'elsewhere');
  return mkdir(cwd, { recursive: true }).then(
    () =>
      new Promise((resolve, reject) => {
        const command = [...wrap, KUBECTL!, '--cache-dir', join(home, 'kubectl-cache'), ...args];
        const child = spawn(command[0]!, command.slice(1), {
          cwd,
          env: { PATH: process.env.PATH ?? '', HOME: join(home, 'kubectl-home'), ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.once('error', reject);
        child.once('close', (code) => resolve({ code, stdout, stderr }));
      }),
  );
}

function proxyLog(): string[] {
  return [
    ...ctx.httpProxy.seen.splice(0).map((p) => `${p.method} ${p.target} ${p.authorization ?? '-'}`),
    ...ctx.httpsProxy.seen.splice(0).map((p) => `${p.method} ${p.target} ${p.authorization ?? '-'}`),
    ...ctx.socks.seen
      .splice(0)
      .map((p) => `SOCKS ${p.addressType === 3 ? 'host' : p.addressType === 1 ? 'ipv4' : 'ipv6'} ${p.host}:${p.port}`),
  ];
}

async function pluginLog(home: string): Promise<unknown[]> {
  const file = join(home, 'plugin.jsonl');
  if (!existsSync(file)) return [];
  const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
  await rm(file);
  return lines.map((l) => JSON.parse(l));
}

/**
 * What `run` sent to the emulator: the distinct identities of its requests to `paths`, or to any path
 * (`'any'`: ours reads the cluster agent's Deployment before the Secret, docs/configuration.md "The
 * running agent's settings"; every request of a run carries the same credentials).
 */
async function observe(home: string, paths: string[] | 'any', run: () => Promise<{ code: number | null; stderr: string }>): Promise<Seen> {
  const from = ctx.emu.requests.length;
  proxyLog();
  await pluginLog(home);
  const { code, stderr } = await run();
  const requests = [
    ...new Set(
      ctx.emu.requests
        .slice(from)
        .filter((r) => paths === 'any' || paths.includes(r.path))
        .map(identityOf),
    ),
  ];
  return { code, stderr, requests, proxy: [...new Set(proxyLog())], plugin: await pluginLog(home) };
}

/** `watch` until its first identity (or, refused, until it exits or reports its first error); its error code. */
async function watchOnce(home: string, env: Record<string, string>): Promise<{ loaded: boolean; code?: string }> {
  const run = startCli(['watch', '-c', home, '--json'], { env: { ...env, HOME: join(home, 'our-home') } });
  const lines = () =>
    run
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { event?: string; error?: { code: string }; code?: string });
  const outcome = await new Promise<{ loaded: boolean; code?: string }>((resolve) => {
    const poll = setInterval(() => {
      const all = lines();
      if (all.some((l) => l.event === 'loaded')) done({ loaded: true });
      const error = all.find((l) => l.event === 'watch-error');
      if (error) done({ loaded: false, code: error.error!.code });
    }, 5);
    const done = (o: { loaded: boolean; code?: string }) => {
      clearInterval(poll);
      resolve(o);
    };
    void run.exit.then(() => {
      const all = lines();
      done({
        loaded: all.some((l) => l.event === 'loaded'),
        code: all.find((l) => l.code)?.code ?? /error\[([A-Z_]+)\]/.exec(run.stderr())?.[1],
      });
    });
  });
  (run.child as ChildProcess).kill('SIGTERM');
  await run.exit;
  return outcome;
}

/** kubectl's minified view of the chosen context (files embedded), without what is empty. */
function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.length ? value.map(normalise) : undefined;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const n = normalise(v);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return value === null || value === false || value === '' ? undefined : value;
}

/** What our reader picked, in kubectl's view format (files embedded as kubectl --flatten does). */
async function ourView(env: Record<string, string>): Promise<unknown> {
  const t = await resolveClusterTarget({ env: { HOME: '/nonexistent', ...env } });
  const c = t.clusterEntry;
  const u = t.userEntry;
  const b64 = (data: Buffer | undefined, file: string | undefined) => (data ?? (file ? readFileSync(file) : undefined))?.toString('base64');
  const context = t.config.contexts.find((x) => x.name === t.context)!;
  return normalise({
    clusters: [
      {
        name: c.name,
        cluster: {
          server: c.server,
          'tls-server-name': c.tlsServerName,
          'insecure-skip-tls-verify': c.insecureSkipTlsVerify,
          'certificate-authority-data': b64(c.certificateAuthorityData, c.certificateAuthority),
          'proxy-url': c.proxyUrl,
          extensions: Object.entries(c.extensions).map(([name, extension]) => ({ name, extension })),
        },
      },
    ],
    users: u
      ? [
          {
            name: u.name,
            user: {
              'client-certificate-data': b64(u.clientCertificateData, u.clientCertificate),
              'client-key-data': b64(u.clientKeyData, u.clientKey),
              token: u.token,
              tokenFile: u.tokenFile,
              as: u.impersonate,
              'as-uid': u.impersonateUid,
              'as-groups': u.impersonateGroups,
              'as-user-extra': u.impersonateUserExtra,
              username: u.username,
              password: u.password,
              'auth-provider': u.authProvider,
              exec: u.exec && {
                command: u.exec.command,
                args: u.exec.args,
                env: u.exec.env,
                apiVersion: u.exec.apiVersion,
                installHint: u.exec.installHint,
                provideClusterInfo: u.exec.provideClusterInfo,
                interactiveMode: u.exec.interactiveMode,
              },
            },
          },
        ]
      : [],
    contexts: [{ name: context.name, context: { cluster: context.cluster, user: context.user, namespace: context.namespace } }],
    'current-context': t.context,
  });
}

/** kubectl's view, its relative tokenFile and exec command made absolute against the kubeconfig's folder (ours are). */
function kubectlView(text: string, folder: string | undefined): unknown {
  const view = JSON.parse(text) as { users?: Array<{ user: { tokenFile?: string; exec?: { command?: string } } }> };
  for (const u of view.users ?? []) {
    if (folder && u.user.tokenFile && !u.user.tokenFile.startsWith('/')) u.user.tokenFile = join(folder, u.user.tokenFile);
    if (folder && u.user.exec?.command?.includes('/') && !u.user.exec.command.startsWith('/'))
      u.user.exec.command = join(folder, u.user.exec.command);
  }
  const { kind: _k, apiVersion: _a, preferences: _p, ...rest } = view as Record<string, unknown>;
  return normalise(rest);
}

const results: Array<{ form: string; kubectl: string; ours: string }> = [];

describe.skipIf(!KUBECTL && !REQUIRED)('every kubeconfig form kubectl supports: kubectl and par-identity agree', () => {
  beforeAll(async () => {
    expect(KUBECTL, 'kubectl must be on PATH (or PAR_IDENTITY_TEST_KUBECTL set) when CI=true').toBeTruthy();
    const emu = await startKubeEmulator({ clientCertificates: true });
    seedNamespaces(emu, ['default', NS]);
    emu.createObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET, namespace: NS },
      type: 'Opaque',
      data: identityData(newIdentity()),
    });
    emu.addToken('tok-inline', { user: 'token-user', ...READ_SECRETS });
    emu.addToken('tok-file', { user: 'file-user', ...READ_SECRETS });
    emu.addToken('tok-exec', { user: 'exec-user', ...READ_SECRETS });
    emu.addToken('tok-sa', { user: `system:serviceaccount:${NS}:par-identity`, ...READ_SECRETS });
    emu.addToken('tok-impersonator', {
      user: 'impersonator',
      rules: [
        { apiGroups: [''], resources: ['users', 'groups'], verbs: ['impersonate'] },
        { apiGroups: ['authentication.k8s.io'], resources: ['uids', 'userextras/scopes', 'userextras/team/name'], verbs: ['impersonate'] },
      ],
    });
    const oidcValid = jwt(Math.floor(Date.now() / 1000) + 3600);
    emu.addToken(oidcValid, { user: 'oidc-user', ...READ_SECRETS });
    const serving = await servingCert();
    const hosts = { [KUBE_EMULATOR_DNS_NAME]: '127.0.0.1' };
    ctx = {
      emu,
      dir: await mkdtemp(join(tmpdir(), 'par-kube-conformance-')),
      caPem: emu.caCert!,
      cert: await emu.issueClientCertificate('cert-user', { groups: ['devs'], ...READ_SECRETS }),
      execCert: await emu.issueClientCertificate('exec-cert-user', READ_SECRETS),
      oidcValid,
      oidcExpired: jwt(Math.floor(Date.now() / 1000) - 3600),
      httpProxy: await startLoopbackProxy({ hosts }),
      // The emulator's own certificate: trusted through the kubeconfig's CA, as Go verifies an https proxy.
      httpsProxy: await startLoopbackProxy({ hosts, tls: serving }),
      socks: await startSocksProxy({ hosts }),
    };
  });

  afterAll(async () => {
    if (!ctx) return;
    await Promise.all([ctx.emu.close(), ctx.httpProxy.close(), ctx.httpsProxy.close(), ctx.socks.close()]);
    await rm(ctx.dir, { recursive: true, force: true });
    // The table of docs/kubernetes-client.md, as this run found it (ports and folders vary between runs).
    const port = new URL(ctx.emu.url).port;
    const steady = (text: string) => text.replaceAll(ctx.dir, '<tmp>').replaceAll(`:${port}`, ':PORT');
    const table = [
      '| form | kubectl | par-identity |',
      '|---|---|---|',
      ...results.map((r) => `| ${r.form} | ${steady(r.kubectl)} | ${steady(r.ours)} |`),
    ].join('\n');
    await mkdir(join(process.cwd(), '.tmp'), { recursive: true });
    await writeFile(join(process.cwd(), '.tmp', 'kubeconfig-conformance.md'), `${table}\n`);
  });

  it.each(ROWS.map((row, i) => ({ ...row, i })))('$form', async (row) => {
    const home = join(ctx.dir, `row-${row.i}`);
    await mkdir(home, { recursive: true });
    await writeFile(join(home, 'datadog-cluster.yaml'), `private_action_runner:\n  enabled: true\nkube_resources_namespace: ${NS}\n`);
    const env = await row.setup(home);
    const folder = row.viewFolder?.(home) ?? (env.KUBECONFIG && !env.KUBECONFIG.includes(':') ? dirname(env.KUBECONFIG) : undefined);

    const theirs = await observe(home, [SECRET_PATH], () => kubectl(home, env, ['get', '--raw', SECRET_PATH]));
    const ours = await observe(home, 'any', () =>
      runCli(['status', '--secret', '-c', home, '--json'], { env: { ...env, HOME: join(home, 'our-home'), NO_COLOR: '1' } }),
    );
    // Whatever the form, no credential of it is ever printed (the proxy's password included).
    for (const secret of [
      'tok-inline',
      'tok-file',
      'tok-exec',
      'tok-impersonator',
      'ppw',
      ctx.oidcValid,
      ctx.oidcExpired,
      ctx.cert.key.split('\n')[1]!,
      ctx.execCert.key.split('\n')[1]!,
    ]) {
      expect(ours.stderr).not.toContain(secret);
    }
    if (theirs.proxy.length > 0)
      expect(ours.stderr).toMatch(/kubernetes: .* through proxy (https?|socks5):\/\/127\.0\.0\.1:\d+ \((proxy-url|HTTPS_PROXY)\)/);

    if ('sent' in row.expect) {
      const answered = row.expect.answered ?? 'ok';
      expect(theirs.code, theirs.stderr).toBe(answered === 'ok' ? 0 : 1);
      expect(ours.code, ours.stderr).toBe(answered === 'ok' ? 0 : 9);
      expect(theirs.requests.length, theirs.stderr).toBeGreaterThan(0);
      expect(ours.requests).toEqual(theirs.requests);
      expect(ours.proxy).toEqual(theirs.proxy);
      expect(ours.plugin).toEqual(theirs.plugin);
      row.check?.(theirs);
      const view = await kubectl(home, env, ['config', 'view', '--minify', '--raw', '--flatten', '-o', 'json']);
      expect(view.code, view.stderr).toBe(0);
      expect(await ourView(env)).toEqual(kubectlView(view.stdout, folder));
      let watched = '';
      if (row.expect.watch) {
        const before = ctx.emu.requests.length;
        const w = await watchOnce(home, env);
        expect(w, 'watch').toEqual({ loaded: true });
        const seen = [
          ...new Set(
            ctx.emu.requests
              .slice(before)
              .filter((r) => r.path === LIST_PATH)
              .map(identityOf),
          ),
        ];
        expect(seen).toEqual(theirs.requests);
        watched = '; `watch` the same';
      }
      const what = `${theirs.requests.join('; ')}${theirs.proxy.length ? ` via ${theirs.proxy.join(', ')}` : ''}${answered === 401 ? ' → 401' : ''}`;
      results.push({ form: row.form, kubectl: `sent: ${what}`, ours: `the same${watched}` });
    } else if ('anonymous' in row.expect) {
      // kubectl asks for a username and password when the user has no credential (EOF without a
      // terminal); we send the request without one, and say why it was refused.
      expect(theirs.code).not.toBe(0);
      expect(theirs.stderr).toContain('EOF');
      expect(theirs.requests).toEqual([]);
      expect(ours.code, ours.stderr).toBe(9);
      expect(ours.stderr).toContain('error[KUBE_UNAUTHORIZED]');
      expect(ours.stderr).toContain(row.expect.anonymous);
      expect(ours.requests).toEqual(['none: groups= sni=-']);
      results.push({
        form: row.form,
        kubectl: 'asks for a username and password (fails without a terminal), sends nothing',
        ours: `differs: sent without a credential → 401 KUBE_UNAUTHORIZED, with a warning naming ${row.expect.anonymous}`,
      });
    } else {
      expect(theirs.code, theirs.stderr).not.toBe(0);
      expect(theirs.requests, 'kubectl sent nothing').toEqual([]);
      expect(ours.code, ours.stderr).toBe(9);
      expect(ours.stderr).toContain(`error[${row.expect.refused}]`);
      if (row.expect.says) expect(ours.stderr).toContain(row.expect.says);
      expect(ours.requests, 'we sent nothing').toEqual([]);
      expect(ours.proxy).toEqual(theirs.proxy);
      row.check?.(ours);
      const firstLine = theirs.stderr.trim().split('\n')[0]!.replace(/\|/g, '\\|').slice(0, 140);
      results.push({ form: row.form, kubectl: `refused: ${firstLine}`, ours: `refused: ${row.expect.refused}` });
    }
  });

  it.skipIf(!canFakeServiceAccount())(
    'in-cluster config: the service-account token and CA, KUBERNETES_SERVICE_HOST and _PORT',
    async () => {
      const home = join(ctx.dir, 'in-cluster');
      const sa = join(home, 'root', 'var', 'run', 'secrets', 'kubernetes.io', 'serviceaccount');
      await mkdir(sa, { recursive: true });
      await writeFile(join(sa, 'token'), 'tok-sa\n');
      await writeFile(join(sa, 'ca.crt'), ctx.caPem);
      await writeFile(join(sa, 'namespace'), NS);
      await writeFile(join(home, 'datadog-cluster.yaml'), `private_action_runner:\n  enabled: true\nkube_resources_namespace: ${NS}\n`);
      const url = new URL(ctx.emu.url);
      const env = { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port };
      // kubectl reads /var/run/secrets/kubernetes.io/serviceaccount: a private mount namespace shows it our folder there.
      const mountSa = [
        'unshare',
        '--user',
        '--map-root-user',
        '--mount',
        'sh',
        '-c',
        `mount -t tmpfs tmpfs /var/run && mkdir -p /var/run/secrets/kubernetes.io && ln -s ${sa} /var/run/secrets/kubernetes.io/serviceaccount && exec "$@"`,
        'sh',
      ];
      const theirs = await observe(home, [SECRET_PATH], () => kubectl(home, env, ['get', '--raw', SECRET_PATH], mountSa));
      const ours = await observe(home, 'any', () =>
        runCli(['status', '--secret', '-c', home, '--json'], {
          env: { ...env, PAR_IDENTITY_SA_ROOT: join(home, 'root'), HOME: join(home, 'our-home') },
        }),
      );
      expect(theirs.code, theirs.stderr).toBe(0);
      expect(ours.code, ours.stderr).toBe(0);
      expect(theirs.requests).toEqual([
        `bearer:system:serviceaccount:${NS}:par-identity groups=system:serviceaccounts,system:serviceaccounts:${NS} sni=-`,
      ]);
      expect(ours.requests).toEqual(theirs.requests);
      const before = ctx.emu.requests.length;
      expect(await watchOnce(home, { ...env, PAR_IDENTITY_SA_ROOT: join(home, 'root') })).toEqual({ loaded: true });
      expect([
        ...new Set(
          ctx.emu.requests
            .slice(before)
            .filter((r) => r.path === LIST_PATH)
            .map(identityOf),
        ),
      ]).toEqual(theirs.requests);
      results.push({
        form: 'in-cluster config (service-account files)',
        kubectl: `sent: ${theirs.requests.join('; ')}`,
        ours: 'the same; `watch` the same',
      });
    },
  );
});
