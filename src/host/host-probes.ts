import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { hostname as osHostname } from 'node:os';

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
}

/** The inode of the initial UTS namespace (PROC_UTS_INIT_INO), which the agent compares /proc/self/ns/uts with. */
const HOST_UTS_INODE = 0xeffffffe;

export function systemProbes(env: NodeJS.ProcessEnv): HostProbes {
  return {
    osHostname: () => env.PAR_IDENTITY_OS_HOSTNAME?.trim() || osHostname(),
    fqdn: () =>
      new Promise((resolve, reject) => {
        execFile('hostname', ['-f'], { timeout: 1000 }, (err, stdout) => (err ? reject(err) : resolve(stdout.trim())));
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
  };
}
