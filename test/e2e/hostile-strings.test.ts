import { writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newIdentity } from '../fixtures/test-identities.js';
import { type ClusterFixture, clusterFixture, NS } from './cluster-fixture.js';
import { describeEachLauncher } from './launchers.js';
import { type LocalFixture, localFixture } from './local-fixture.js';
import { expectClean, HOSTILE, TAIL } from './hostile-text.js';

// Terminal injection (issue 24): every string that did not originate in the tool — a lock file's
// fields, the cluster id of the ConfigMap or the Secret, a redirect's Location, a response's
// data.type, the JWK members of a planted identity file — is planted here with escape sequences
// (CSI, OSC 52 clipboard writes, the 8-bit CSI 0x9B), bidi overrides and line separators, plus a
// long tail, and must reach stdout, stderr and --json only sanitized and capped.

describeEachLauncher('strings from files and servers reach the terminal and --json sanitized and capped', (launcher) => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await localFixture();
  });
  afterEach(async () => {
    await fx.close();
  });
  const run = (args: string[]) => fx.run(args, launcher.options);

  it('a lock file whose host and since hold escape sequences: refused as naming no holder, nothing of them printed', async () => {
    await writeFile(
      `${fx.identityPath}.lock`,
      JSON.stringify({ pid: process.pid, host: `h${HOSTILE}${TAIL}`, since: `2026-01-01 (${HOSTILE})`, nonce: '0123456789abcdef' }),
    );
    for (const json of [false, true]) {
      const rotate = await run(['rotate-identity', '-c', fx.dir, '--no-verify', ...(json ? ['--json'] : [])]);
      expect(rotate.code, rotate.stderr).toBe(11);
      expectClean(rotate, json);
      const status = await run(['status', '-c', fx.dir, ...(json ? ['--json'] : [])]);
      expectClean(status, json);
    }
    expect(fx.emulator.requests.filter((r) => r.route === 'enroll')).toHaveLength(0);
  });

  it('a redirect whose Location holds the 8-bit CSI (0x9B): ENROLL_REDIRECT_REFUSED, the Location shown without it and capped', async () => {
    // Node refuses ESC in a header it sends; 0x9B (latin1, as HTTP allows) is what a server can send.
    const location = `https://elsewhere.example/\u009b2J\u009b31mrotated${TAIL}`;
    for (const json of [false, true]) {
      fx.emulator.script('enroll', { status: 302, headers: { location }, body: '' });
      const rotate = await run(['rotate-identity', '-c', fx.dir, '--no-verify', ...(json ? ['--json'] : [])]);
      expect(rotate.code, rotate.stderr).toBe(5);
      expect(rotate[json ? 'stdout' : 'stderr']).toContain('ENROLL_REDIRECT_REFUSED');
      expect(rotate[json ? 'stdout' : 'stderr']).toContain('https://elsewhere.example/');
      expectClean(rotate, json);
    }
  });

  it('a 200 whose data.type holds escape sequences and a long tail: ENROLL_BAD_RESPONSE, the value sanitized and capped', async () => {
    const body = JSON.stringify({ data: { type: `${HOSTILE}${TAIL}`, attributes: { org_id: 1234567, runner_id: 'r-1' } } });
    for (const json of [false, true]) {
      fx.emulator.script('enroll', { status: 200, body });
      const rotate = await run(['rotate-identity', '-c', fx.dir, '--no-verify', ...(json ? ['--json'] : [])]);
      expect(rotate.code, rotate.stderr).toBe(5);
      expect(rotate[json ? 'stdout' : 'stderr']).toContain('data.type is');
      expectClean(rotate, json);
    }
  });

  for (const field of ['kty', 'crv', 'alg'] as const) {
    it(`a planted identity file whose JWK ${field} holds escape sequences: reported as not decoding, the value sanitized and capped`, async () => {
      const id = newIdentity();
      const jwk = JSON.parse(Buffer.from(id.privateKey, 'base64url').toString()) as Record<string, string>;
      // A tail of 1 000 (past the 600 that show a cap) keeps the key under its own bound of 2 048
      // characters, so the member is read and named; a longer one is refused by that bound, unread
      // (docs/security.md, "Bounds on what is read").
      jwk[field] = `${HOSTILE}${TAIL.slice(0, 1000)}`;
      const privateKey = Buffer.from(JSON.stringify(jwk)).toString('base64url');
      await writeFile(fx.identityPath, JSON.stringify({ private_key: privateKey, urn: id.urn }), { mode: 0o600 });
      for (const json of [false, true]) {
        const status = await run(['status', '-c', fx.dir, ...(json ? ['--json'] : [])]);
        expect(status[json ? 'stdout' : 'stderr'] + status.stdout).toContain(`${field}: is`);
        expectClean(status, json);
        const rollback = await run(['rollback', '-c', fx.dir, '--no-verify', ...(json ? ['--json'] : [])]);
        expectClean(rollback, json);
      }
    });
  }
});

describeEachLauncher('the cluster id of the ConfigMap and of the Secret reaches the terminal and --json sanitized', (launcher) => {
  let cx: ClusterFixture;
  beforeEach(async () => {
    cx = await clusterFixture();
  });
  afterEach(async () => {
    await cx.close();
  });

  it('a 36-byte id with an OSC 52 clipboard write and an 8-bit CSI: enrolled and stored as it is (the agent uses it so), shown sanitized', async () => {
    const hostileId = '\u001b]52;c;b3duZWQ=\u0007\u009b2J\u202e';
    const id = hostileId + 'x'.repeat(36 - Buffer.byteLength(hostileId));
    expect(Buffer.byteLength(id)).toBe(36);
    cx.kube.createObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'datadog-cluster-id', namespace: NS }, data: { id } });
    for (const json of [false, true]) {
      const rotate = await cx.rotate(['--no-verify', ...(json ? ['--json'] : [])], launcher.options);
      expect(rotate.code, rotate.stderr).toBe(0);
      expectClean(rotate, json);
    }
    expect(cx.secretData().orch_cluster_id).toBe(id);
    for (const json of [false, true]) {
      const status = await cx.run(
        ['status', '--secret', '-c', cx.dir, '--kubeconfig', cx.adminKubeconfig, ...(json ? ['--json'] : [])],
        launcher.options,
      );
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout + status.stderr).toContain('xxxxxxxx');
      expectClean(status, json);
    }
  });

  it("the Secret's orch_cluster_id and rotated-at annotation edited to hostile text: status shows them sanitized, capped or not at all", async () => {
    expect((await cx.rotate(['--no-verify'], launcher.options)).code).toBe(0);
    const secret = cx.secret()!;
    const data = secret.data as Record<string, string>;
    data.orch_cluster_id = Buffer.from(`${HOSTILE}${TAIL}`).toString('base64');
    // Date.parse accepts text in parentheses: "2026-01-01 (…)" is a valid date to it.
    secret.metadata.annotations = { ...secret.metadata.annotations, 'par-identity.datadoghq.com/rotated-at': `2026-01-01 (${HOSTILE})` };
    cx.kube.updateObject(secret);
    for (const json of [false, true]) {
      const status = await cx.run(
        ['status', '--secret', '-c', cx.dir, '--kubeconfig', cx.adminKubeconfig, ...(json ? ['--json'] : [])],
        launcher.options,
      );
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout + status.stderr).toContain('more characters)');
      expectClean(status, json);
    }
  });
});
