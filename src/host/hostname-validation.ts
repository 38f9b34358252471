// The agent's hostname rules (pkg/util/hostname/validate, docs/protocol.md §4): a name it would refuse is
// never written into an identity, since the agent would then resolve something else and re-enroll.

const LOCALHOST_NAMES = new Set(['localhost', 'localhost.localdomain', 'localhost6.localdomain6', 'ip6-localhost']);
const RFC1123 = /^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])$/;
export const MAX_HOSTNAME_LENGTH = 255;

/** Why the agent would refuse this hostname, or undefined when it is valid. */
export function hostnameProblem(name: string): string | undefined {
  if (name === '') return 'it is empty';
  if (LOCALHOST_NAMES.has(name.toLowerCase())) return `${name} is a local hostname`;
  if (name.length > MAX_HOSTNAME_LENGTH) return `it is longer than ${MAX_HOSTNAME_LENGTH} characters`;
  if (!RFC1123.test(name)) return 'it is not RFC 1123 compliant';
  return undefined;
}

/** EC2's default hostnames (`ip-…`, `domu…`; `ec2amaz-…` only with ec2_use_windows_prefix_detection), case-insensitive as upstream. */
export function isEc2DefaultHostname(name: string, useWindowsPrefix: boolean): boolean {
  const lower = name.toLowerCase();
  const prefixes = useWindowsPrefix ? ['ip-', 'domu', 'ec2amaz-'] : ['ip-', 'domu'];
  return prefixes.some((p) => lower.startsWith(p));
}
