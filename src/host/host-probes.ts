import { execFile } from 'node:child_process';
import { access, readFile, stat } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { hostname as osHostname } from 'node:os';
import { lookupBudget } from './lookup-scope.js';

// What the hostname chain reads from the machine itself, behind one interface so unit tests can
// play any host. PAR_IDENTITY_OS_HOSTNAME (test/debug only) replaces the OS hostname, so the e2e
// tests can play an EC2 host named ip-10-0-0-1 without renaming the machine.

export interface HostProbes {
  osHostname(): string;
  /** `hostname -f`, as the agent runs it on Unix. */
  fqdn(): Promise<string>;
  /** True/false when known; undefined when it cannot be told (the agent then trusts the OS hostname). */
  inHostUtsNamespace(): Promise<boolean | undefined>;
  readFile(path: string): Promise<string>;
  /** Whether a path exists (os.Stat succeeding, as the agent checks /etc/ecs/ecs.config). */
  exists(path: string): Promise<boolean>;
  /** Whether a unix socket accepts a connection within the time (the agent's socket.IsAvailable). */
  socketReachable(path: string, timeoutMs: number): Promise<boolean>;
}

/** The inode of the initial UTS namespace (PROC_UTS_INIT_INO), which the agent compares /proc/self/ns/uts with. */
const HOST_UTS_INODE = 0xeffffffe;

function connectsWithin(path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), lookupBudget(timeoutMs));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function systemProbes(env: NodeJS.ProcessEnv): HostProbes {
  return {
    osHostname: () => env.PAR_IDENTITY_OS_HOSTNAME?.trim() || osHostname(),
    fqdn: () =>
      new Promise((resolve, reject) => {
        execFile('hostname', ['-f'], { timeout: Math.max(1, lookupBudget(1000)) }, (err, stdout) =>
          err ? reject(err) : resolve(stdout.trim()),
        );
      }),
    async inHostUtsNamespace() {
      if (env.PAR_IDENTITY_OS_HOSTNAME?.trim()) return true;
      if (process.platform !== 'linux') return true;
      try {
        return (await stat('/proc/self/ns/uts')).ino === HOST_UTS_INODE;
      } catch {
        return undefined;
      }
    },
    readFile: (path) => readFile(path, 'utf8'),
    exists: (path) =>
      access(path).then(
        () => true,
        () => false,
      ),
    async socketReachable(path, timeoutMs) {
      try {
        if (!(await stat(path)).isSocket()) return false;
      } catch {
        return false;
      }
      return connectsWithin(path, timeoutMs);
    },
  };
}
