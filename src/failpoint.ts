// Test-only crash switch: PAR_IDENTITY_FAILPOINT=<name> kills the process with SIGKILL at that step,
// so end-to-end tests can prove that every crash point leaves a complete, loadable identity.

export type FailpointName = 'after-enroll' | 'after-temp-write' | 'after-backup' | 'after-rename' | 'after-dir-fsync' | 'after-secret-read';

export function failpoint(name: FailpointName): void {
  if (process.env.PAR_IDENTITY_FAILPOINT === name) process.kill(process.pid, 'SIGKILL');
}
