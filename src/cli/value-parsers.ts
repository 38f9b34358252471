import { parseAgentRef } from '../agent/agent-ref.js';
import { UsageError } from '../errors.js';
import { AGENT_VERSION_FORMAT } from '../host/agent-version-format.js';
import { parseListenAddress } from '../reload/listen-address.js';
import { parseSignalName } from '../reload/signal-name.js';
import { parseWorkloadRef } from '../rollout/workload-ref.js';

// Flag and argument parsers: every flag value with a format is checked here, as commander parses it,
// before anything is read or contacted, and rejected by one rule (README, "Rejected values"): the
// message quotes the value as kubectl does ("abc"), except for a secret flag, or a value that looks like
// a key (32 or more hex characters), which are shown by their length only: a key pasted into the wrong
// place must not reach a terminal or a log.

/** Flags whose value says where a key is: a key pasted there by mistake is the likeliest leak. */
const SECRET_FLAGS = new Set(['--api-key-file', '--app-key-file']);
const KEY_LIKE = /[0-9a-f]{32,}/i;
/** Escaped in a quoted value, so it cannot move the cursor or reorder the line: C1 controls, bidi and line separators. */
const UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** How an error shows a rejected value: `"abc"`, or `a 40-character value`. */
export function rejectedValue(flag: string, value: string): string {
  if (SECRET_FLAGS.has(flag) || KEY_LIKE.test(value)) return `a ${value.length}-character value`;
  return JSON.stringify(value).replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `check` returns the value to keep, or undefined (or throws) when the text is not one. */
function flagParser<T>(flag: string, expected: string, check: (value: string) => T | undefined) {
  return (value: string): T => {
    let parsed: T | undefined;
    try {
      parsed = check(value);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined) throw new UsageError(`${flag} must be ${expected}, got ${rejectedValue(flag, value)}`);
    return parsed;
  };
}

/** Like commander's .choices(), with the rule above. */
export function choiceParser(name: string, choices: readonly string[]) {
  return flagParser(name, `one of ${choices.join(', ')}`, (value) => (choices.includes(value) ? value : undefined));
}

export function processIdParser(flag: string) {
  return flagParser(flag, 'a process id', (value) => {
    const n = Number(value);
    return /^\d+$/.test(value.trim()) && Number.isSafeInteger(n) && n > 0 ? n : undefined;
  });
}

/** A TCP port, 0 (any free port) to 65535. */
export const portParser = (flag: string) =>
  flagParser(flag, 'a port number from 0 to 65535', (value) =>
    /^\d{1,5}$/.test(value) && Number(value) <= 65535 ? Number(value) : undefined,
  );

export const agentVersionParser = flagParser('--agent-version', 'an agent version like 7.66.0 or 7.66.0+commit.abc1234', (value) =>
  AGENT_VERSION_FORMAT.test(value) ? value : undefined,
);

/** The text itself once `check` accepts it (the command parses it again where it is used). */
const kept = (check: (value: string) => unknown) => (value: string) => {
  check(value);
  return value;
};

export const listenParser = flagParser('--listen', 'an address: PORT, :PORT or HOST:PORT (e.g. 127.0.0.1:9090)', kept(parseListenAddress));

/** HUP, SIGHUP, hup. */
export const signalNameParser = flagParser('--signal-name', 'a signal name (HUP, USR1, USR2, TERM…)', kept(parseSignalName));

/** --agent deployment/<name>: the cluster agent's Deployment, in -n (else the kubeconfig's namespace). */
export const agentRefParser = flagParser(
  '--agent',
  "deployment/<name> (the cluster agent's Deployment)",
  kept((value) => parseAgentRef(value)),
);

/** deployment/<name> or daemonset/<name>: the command resolves it in its namespace. */
export const workloadParser = (flag: string) =>
  flagParser(
    flag,
    'deployment/<name> or daemonset/<name> (also deploy/ and ds/)',
    kept((value) => parseWorkloadRef(value, 'default')),
  );
