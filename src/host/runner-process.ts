import { createHash } from 'node:crypto';
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { hostPath } from './host-files.js';

// The running runner's own environment (docs/protocol.md §4, "The runner's environment"): DD_*
// variables override the config file, so what the runner process was started with is what it reads.
// A process counts only when its executable is the agent's runner binary (…/embedded/bin/
// privateactionrunner, where the agent's packages and images put it), it is owned by root or by the
// owner of the agent config, and its /proc/<pid>/environ is readable. /proc is taken under
// PAR_IDENTITY_HOST_ROOT like every host file, so tests never look at the machine's processes.

const RUNNER_EXE_SUFFIX = '/embedded/bin/privateactionrunner';
/** Keys whose values are never shown: only that they differ, their last 4 characters and a fingerprint. */
const SECRET_VARIABLES = new Set(['DD_API_KEY', 'DD_APP_KEY']);

export interface RunnerProcess {
  pid: number;
  exe: string;
  /** Its DD_* variables. */
  env: Record<string, string>;
}

type RunnerLookup = { found: RunnerProcess; notes: string[] } | { found?: undefined; notes: string[] };

function ddVariables(environ: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of environ.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 3 && entry.startsWith('DD_')) out[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return out;
}

async function realUid(procDir: string): Promise<number | undefined> {
  const text = await readFile(`${procDir}/status`, 'utf8');
  const match = /^Uid:\s+(\d+)/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The runner process, if exactly one is visible and qualifies. `agentUid`: the owner of the agent config. */
export async function findRunnerProcess(env: NodeJS.ProcessEnv, agentUid: number | undefined): Promise<RunnerLookup> {
  const procRoot = hostPath(env, '/proc');
  let entries: string[];
  try {
    entries = (await readdir(procRoot)).filter((e) => /^\d+$/.test(e));
  } catch {
    return { notes: [`runner process: ${procRoot} cannot be listed`] };
  }
  const found: RunnerProcess[] = [];
  const notes: string[] = [];
  for (const entry of entries) {
    const dir = `${procRoot}/${entry}`;
    let exe: string;
    try {
      exe = await readlink(`${dir}/exe`);
    } catch {
      continue; // another user's process, or a kernel thread: its executable cannot be told
    }
    if (!exe.endsWith(RUNNER_EXE_SUFFIX)) continue;
    try {
      const uid = await realUid(dir);
      if (uid !== 0 && uid !== agentUid) {
        notes.push(`runner process ${entry}: owned by uid ${uid}, neither root nor the agent config's owner; not used`);
        continue;
      }
      found.push({ pid: Number(entry), exe, env: ddVariables(await readFile(`${dir}/environ`, 'utf8')) });
    } catch (err) {
      notes.push(`runner process ${entry}: its environment cannot be read (${(err as NodeJS.ErrnoException).code ?? err})`);
    }
  }
  if (found.length > 1) return { notes: [...notes, `runner processes ${found.map((p) => p.pid).join(', ')}: more than one, none is used`] };
  return found[0] ? { found: found[0], notes } : { notes };
}

/** The owner of a file, for the "agent's user" test (undefined when it cannot be read). */
export async function ownerOf(path: string | undefined): Promise<number | undefined> {
  if (!path) return undefined;
  try {
    return (await stat(path)).uid;
  } catch {
    return undefined;
  }
}

function masked(value: string | undefined): string {
  if (value === undefined) return 'unset';
  const tail = value.length <= 8 ? '****' : `…${value.slice(-4)}`;
  return `${tail}, sha256:${createHash('sha256').update(value.trim()).digest('hex').slice(0, 8)}`;
}

/** One line per DD_* variable that differs between the runner and this process; secrets masked. */
export function environmentDifferences(runner: Record<string, string>, own: NodeJS.ProcessEnv): string[] {
  const names = [...new Set([...Object.keys(runner), ...Object.keys(own).filter((n) => n.startsWith('DD_'))])].sort();
  const lines: string[] = [];
  for (const name of names) {
    const theirs = runner[name];
    const ours = own[name] === '' ? undefined : own[name];
    if ((theirs === '' ? undefined : theirs) === ours) continue;
    if (SECRET_VARIABLES.has(name)) {
      const consequence =
        name === 'DD_API_KEY' ? ': the runner hashes its own key, so an identity made with this one is re-enrolled at its next start' : '';
      lines.push(`${name} differs (runner ${masked(theirs)}; here ${masked(ours)})${consequence}`);
    } else if (theirs === undefined) lines.push(`${name} is set here, not in the runner`);
    else if (ours === undefined) lines.push(`${name} is set in the runner only`);
    else lines.push(`${name} differs`);
  }
  return lines;
}

/** This process's environment with its DD_* replaced by the runner's (--env-from-runner). */
export function withRunnerEnvironment(own: NodeJS.ProcessEnv, runner: Record<string, string>): NodeJS.ProcessEnv {
  const kept = Object.fromEntries(Object.entries(own).filter(([name]) => !name.startsWith('DD_')));
  return { ...kept, ...runner };
}
