import { execFileSync } from 'node:child_process';

// The attacker of the hostile-*.test.ts suites (issue 24): a local unprivileged user, uid 65534,
// played with setpriv. Playing another uid needs root, as the tool has in agent containers (and CI);
// elsewhere those tests are skipped, and ROOT_ONLY is put in their names to say why.

export const NOBODY = 65534;
export const ROOT = process.geteuid?.() === 0;
export const ROOT_ONLY = ROOT ? '' : ` [SKIPPED: needs root to play uid ${NOBODY} with setpriv]`;

/** Runs a shell command as uid 65534, as the attacker would; `input` is its stdin. */
export function asNobody(script: string, input?: string): void {
  execFileSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', 'sh', '-c', script], {
    input: input ?? '',
    stdio: ['pipe', 'ignore', 'inherit'],
  });
}
