import { chmod, chown, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type AgentIpcEmulator, startAgentIpcEmulator } from '../../emulators/agent-ipc/index.js';
import { asNobody, NOBODY, ROOT, ROOT_ONLY } from './attacker.js';
import { describeEachLauncher, type Launcher } from './launchers.js';
import { type LocalFixture, localFixture } from './local-fixture.js';

// The agent's IPC files as an attacker meets them (issue 24, a planted file beside the identity): the
// auth token and the IPC certificate are read beside datadog.yaml, which is where the identity file is
// (docs/protocol.md §4b and docs/protocol.md §5). In a sticky 1777 directory uid 65534 plants
// `auth_token` as a link to a file only root can read (here: the identity file itself, one line of JSON
// holding the private key), and an `ipc_cert.pem` of their own, so that TLS trusts their listener on
// cmd_port: root would send that file's content as the bearer token. Or a token of their own, to choose the hostname the identity
// is enrolled with; or a FIFO, on which a read never ends. The files are read only when no one but
// root, this user or the directory's owner could have put them there, and the token only in the form
// the agent writes. The attacker's listener is the agent IPC emulator, which records every request.
// Playing uid 65534 needs root; elsewhere skipped and said so.

let fx: LocalFixture;
let listener: AgentIpcEmulator;
beforeEach(async () => {
  fx = await localFixture();
  listener = await startAgentIpcEmulator({ hostname: 'attacker-chosen-host' });
  await fx.writeConfig(`cmd_port: ${listener.port}`);
});
afterEach(async () => {
  await listener.close();
  await fx.close();
});

async function seed(launcher: Launcher): Promise<void> {
  const first = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
  expect(first.code, first.stderr).toBe(0);
  // The first run asked no agent: no token was there yet.
  expect(listener.requests).toEqual([]);
  await chmod(fx.dir, 0o1777);
}

const hostnameOf = async () => (JSON.parse(await fx.read()) as { hostname?: string }).hostname;

describeEachLauncher('the agent IPC files beside the identity are not taken from a stranger', (launcher) => {
  it.runIf(ROOT)(
    `uid ${NOBODY} links auth_token to the identity file and plants its own ipc_cert.pem: nothing is sent to its listener, the run says why${ROOT_ONLY}`,
    async () => {
      await seed(launcher);
      const key = (JSON.parse(await fx.read()) as { private_key: string }).private_key;
      asNobody(
        `umask 022; ln -s '${fx.identityPath}' '${join(fx.dir, 'auth_token')}' && cat > '${join(fx.dir, 'ipc_cert.pem')}'`,
        listener.certPem,
      );
      const runs = [
        await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options),
        await fx.run(['status', '-c', fx.dir], launcher.options),
      ];
      // Sent, the private key of the identity would be in an Authorization header here.
      expect(listener.requests.some((r) => r.authorization?.includes(key))).toBe(false);
      expect(listener.requests).toEqual([]);
      for (const run of runs) expect(run.code, run.stderr).toBe(0);
      expect(runs[0]!.stderr).toContain(`agent IPC not asked: ${join(fx.dir, 'auth_token')} is a symbolic link of uid ${NOBODY}`);
    },
  );

  it.runIf(ROOT)(
    `uid ${NOBODY} plants a token and a certificate of its own: its listener is not asked, the hostname is not the one it answers${ROOT_ONLY}`,
    async () => {
      await seed(launcher);
      await listener.writeFiles(fx.dir);
      for (const name of ['auth_token', 'ipc_cert.pem']) await chown(join(fx.dir, name), NOBODY, NOBODY);
      const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`agent IPC not asked: ${join(fx.dir, 'auth_token')} belongs to uid ${NOBODY}`);
      expect(listener.requests).toEqual([]);
      expect(await hostnameOf()).toBe('e2e-host');
      // The control: the same files as root's are the agent's, asked and believed.
      for (const name of ['auth_token', 'ipc_cert.pem']) await chown(join(fx.dir, name), 0, 0);
      const trusted = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], launcher.options);
      expect(trusted.code, trusted.stderr).toBe(0);
      expect(listener.requests.map((r) => `${r.path} ${r.status}`)).toContain('/agent/hostname 200');
      expect(await hostnameOf()).toBe('attacker-chosen-host');
    },
  );

  it.runIf(ROOT)(
    `uid ${NOBODY} plants auth_token as a FIFO: the run goes on without the agent, never blocked reading it${ROOT_ONLY}`,
    async () => {
      await seed(launcher);
      asNobody(`mkfifo '${join(fx.dir, 'auth_token')}'`);
      // A blocking open(2) of a FIFO never returns: the run would be killed at the timeout.
      const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { ...launcher.options, timeoutMs: 15_000 });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`agent IPC not asked: ${join(fx.dir, 'auth_token')} is not a regular file`);
      expect((await stat(join(fx.dir, 'auth_token'))).isFIFO()).toBe(true);
      expect(listener.requests).toEqual([]);
    },
  );
});
