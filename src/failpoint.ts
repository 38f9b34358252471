// Test-only switch: PAR_IDENTITY_FAILPOINT=<name> kills the process with SIGKILL at that step, so
// end-to-end tests (and the fault matrix) can prove that every crash point leaves a complete,
// loadable identity. PAR_IDENTITY_FAILPOINT=<name>:stop stops it there with SIGSTOP instead: the
// test then changes the world at exactly that point (another writer's update on a real apiserver,
// where no fault can be injected into the server) and resumes it with SIGCONT. FAILPOINTS lists
// every name, in the order a run reaches them.

// exported for tests: the crash tests kill the process at each point by name
export const FAILPOINTS = {
  enroll: ['after-enroll'],
  // Between the signed health check's answer and what the run does with it (mark the pending key rejected, write).
  verify: ['after-verify'],
  replace: ['after-temp-write', 'after-keep-aside', 'after-backup-temp-write', 'after-backup', 'after-rename', 'after-dir-fsync'],
  swap: [
    'swap-after-temp-write',
    'swap-after-keep-backup',
    'swap-after-keep-live',
    'swap-after-rename',
    'swap-after-backup',
    'swap-after-remove-source',
    'swap-after-dir-fsync',
  ],
  sweep: ['keep-aside-before-chmod', 'sweep-after-keep'],
  secret: ['after-secret-read'],
  // rollout: after the patch that changed the strategy (and recorded the original), once in the wait, right before
  // the capacity fallback's delete of an old Pod (another writer replaces that Pod there), before the restore.
  rollout: [
    'rollout-before-check',
    'rollout-before-patch',
    'rollout-after-patch',
    'rollout-during-wait',
    'rollout-before-fallback-delete',
    'rollout-before-restore',
  ],
  // watch --pidfile: between the check of the process the pidfile names and the signal.
  signal: ['signal-after-check'],
  // The runner's boundary before each step, where a stop signal is honoured (src/rotation/runner.ts).
  step: [
    'before-resolve',
    'before-lock',
    'before-read',
    'before-preflight',
    'before-generate',
    'before-enroll',
    'before-write',
    'before-read-back',
    'before-verify',
    'before-connections',
    'before-rollout',
    'before-restore',
    'before-inspect',
  ],
} as const;

type FailpointName = (typeof FAILPOINTS)[keyof typeof FAILPOINTS][number];

/** The failpoint of the boundary before the step named `step` (a name not in FAILPOINTS.step is none). */
export function stepFailpoint(step: string): void {
  const name = `before-${step}`;
  if ((FAILPOINTS.step as readonly string[]).includes(name)) failpoint(name as FailpointName);
}

export function failpoint(name: FailpointName): void {
  const set = process.env.PAR_IDENTITY_FAILPOINT;
  if (set === name) process.kill(process.pid, 'SIGKILL');
  else if (set === `${name}:stop`) process.kill(process.pid, 'SIGSTOP');
}
