import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ClusterFixture, clusterFixture, NS, SECRET } from './cluster-fixture.js';

// Errors by what happened (issue 31, point 9): the Kubernetes API reached but answering what it never
// answers (a 200 that is not JSON, Secret data that are not strings) is a bad response, not
// "unreachable"; a kubeconfig value no request can be made with (a server URL that does not parse,
// a token holding ESC) is a configuration error naming it; no input ends in INTERNAL (exit 1).

interface ErrorDoc {
  code: string;
  exitCode: number;
  message: string;
  hint: string;
}

describe('what the Kubernetes API answers, named for what happened', () => {
  let fx: ClusterFixture;
  beforeEach(async () => {
    fx = await clusterFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  const rotateJson = async (extra: string[] = []) => {
    const run = await fx.rotate(['--json', ...extra]);
    return { run, doc: JSON.parse(run.stdout) as ErrorDoc };
  };

  it('a 200 whose body is not JSON: KUBE_BAD_RESPONSE (exit 9), not unreachable; nothing enrolled', async () => {
    fx.kube.faults.failNext({ verb: 'get', resource: 'secrets', name: SECRET }, { code: 200, rawBody: '{"kind":"Secret","data":{"urn":' });
    const { run, doc } = await rotateJson();
    expect(run.code, run.stderr).toBe(9);
    expect(doc.code).toBe('KUBE_BAD_RESPONSE');
    expect(doc.message).toContain('not valid JSON');
    expect(doc.message).not.toMatch(/unreachable/i);
    expect(fx.enrollment.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
  });

  it('a Secret whose data values are not strings: KUBE_BAD_RESPONSE naming the value; nothing enrolled', async () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET, namespace: NS, resourceVersion: '7' },
      type: 'Opaque',
      data: { private_key: 12345, urn: { nested: true } },
    };
    fx.kube.faults.failNext({ verb: 'get', resource: 'secrets', name: SECRET }, { code: 200, body: secret });
    const { run, doc } = await rotateJson();
    expect(run.code, run.stderr).toBe(9);
    expect(doc.code).toBe('KUBE_BAD_RESPONSE');
    expect(doc.message).toContain('"private_key" is not a string (number)');
    expect(fx.enrollment.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
  });

  /** The fixture's admin kubeconfig with `change` applied to its (only) cluster and user. */
  async function kubeconfigWith(
    change: (doc: { clusters: Array<{ cluster: Record<string, unknown> }>; users: Array<{ user: Record<string, unknown> }> }) => void,
  ): Promise<string> {
    const doc = parse((await import('node:fs')).readFileSync(fx.adminKubeconfig, 'utf8'));
    change(doc);
    const path = join(fx.dir, 'changed.kubeconfig');
    await writeFile(path, stringify(doc), { mode: 0o600 });
    return path;
  }

  it('a token holding ESC: KUBE_CREDENTIALS saying so, the token never printed; nothing sent, nothing enrolled', async () => {
    const token = `${fx.kube.adminToken}\u001b[31mred`;
    const kubeconfig = await kubeconfigWith((doc) => {
      doc.users[0]!.user.token = token;
    });
    const before = fx.kube.requests.length;
    const run = await fx.run(['rotate-par-identity', '-c', fx.dir, '--kubeconfig', kubeconfig, '--json']);
    expect(run.code, run.stderr).toBe(9);
    const doc = JSON.parse(run.stdout) as ErrorDoc;
    expect(doc.code).toBe('KUBE_CREDENTIALS');
    expect(doc.message).toContain('bearer token');
    expect(doc.message).toContain('control character');
    expect(`${run.stdout}${run.stderr}`).not.toContain(fx.kube.adminToken);
    expect(fx.kube.requests.length).toBe(before);
    expect(fx.enrollment.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
  });

  // A small fuzz of kubeconfig cluster values: each is refused as configuration (exit 9, the value
  // named), none is INTERNAL (exit 1) or "unreachable".
  const servers: Array<[string, string]> = [
    ['https://127.0.0.1:99999', 'is not a valid URL'],
    ['https://[::1', 'is not a valid URL'],
    ['https://[::1]:6443:7', 'is not a valid URL'],
    ['https://exa mple.com', 'is not a valid URL'],
    ['https://host:port', 'is not a valid URL'],
    ['ftp://127.0.0.1:6443', 'has the scheme "ftp"'],
    ['https://127.0.0.1:0', 'has port 0'],
    ['https://', 'is not a valid URL'],
  ];
  for (const [server, why] of servers) {
    it(`server ${JSON.stringify(server)}: KUBE_NOT_CONFIGURED naming the value (${why}), never INTERNAL`, async () => {
      const kubeconfig = await kubeconfigWith((doc) => {
        doc.clusters[0]!.cluster.server = server;
      });
      const run = await fx.run(['rotate-par-identity', '-c', fx.dir, '--kubeconfig', kubeconfig, '--json']);
      expect(run.code, run.stderr).toBe(9);
      const doc = JSON.parse(run.stdout) as ErrorDoc;
      expect(doc.code).toBe('KUBE_NOT_CONFIGURED');
      expect(doc.message).toContain(`the server ${JSON.stringify(server)}`);
      expect(doc.message).toContain(why);
      expect(fx.enrollment.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
    });
  }

  // Other values of the same kubeconfig: whatever they are refused as, never INTERNAL.
  const others: Array<
    [string, (doc: { clusters: Array<{ cluster: Record<string, unknown> }>; users: Array<{ user: Record<string, unknown> }> }) => void]
  > = [
    [
      'an impersonated user holding a line break',
      (doc) => {
        doc.users[0]!.user.as = 'admin\r\nX-Injected: 1';
      },
    ],
    [
      'tls-server-name holding ESC',
      (doc) => {
        doc.clusters[0]!.cluster['tls-server-name'] = 'api\u001b[2J.example';
      },
    ],
    [
      'certificate-authority-data that is no certificate',
      (doc) => {
        doc.clusters[0]!.cluster['certificate-authority-data'] = Buffer.from('not a certificate').toString('base64');
      },
    ],
    [
      'a password holding a NUL',
      (doc) => {
        Object.assign(doc.users[0]!.user, { token: undefined, username: 'u', password: 'p\u0000w' });
      },
    ],
    [
      'proxy-url without a host',
      (doc) => {
        doc.clusters[0]!.cluster['proxy-url'] = 'http://';
      },
    ],
  ];
  for (const [what, change] of others) {
    it(`${what}: refused with a code of its own, exit 9, never INTERNAL`, async () => {
      const kubeconfig = await kubeconfigWith(change);
      const run = await fx.run(['rotate-par-identity', '-c', fx.dir, '--kubeconfig', kubeconfig, '--json']);
      const doc = JSON.parse(run.stdout) as ErrorDoc;
      expect(doc.code, run.stderr).not.toBe('INTERNAL');
      expect(run.code, run.stderr).toBe(9);
      expect(fx.enrollment.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
    });
  }
});
