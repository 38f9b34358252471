import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

// Argument values are checked before anything is contacted. A rejected value is quoted, unless it looks
// like a key (README, "Rejected values"): SECRET below does, and is never echoed back.

const SECRET = 'ddsecret0123456789abcdef0123456789abcdef';

let dir: string;
let kubeconfig: string;
let server: Server;
const sockets: Socket[] = [];
let connections = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-cli-args-'));
  // A loopback listener that counts connections and answers nothing: any network call shows up here.
  server = createServer((socket) => {
    connections++;
    sockets.push(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:${port}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    namespace: default\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n`,
  );
  await writeFile(join(dir, 'datadog-cluster.yaml'), 'private_action_runner:\n  enabled: true\n  identity_use_k8s_secret: true\n');
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('duration flags are bounded and checked before any network call', () => {
  it('the counting listener does see a command that gets past its flags (control)', async () => {
    const before = connections;
    const run = await runCli(['rollout', 'deployment/x', '--check', '--kubeconfig', kubeconfig, '--timeout', '5s']);
    expect(run.code).not.toBe(0);
    expect(connections).toBeGreaterThan(before);
  });

  it.each([
    [
      'rollout --poll-interval NaN',
      ['rollout', 'deployment/x', '--kubeconfig', kubeconfig, '--poll-interval', 'NaN'],
      '--poll-interval must be a duration',
    ],
    [
      'rollout --poll-interval 0',
      ['rollout', 'deployment/x', '--kubeconfig', kubeconfig, '--poll-interval', '0'],
      '--poll-interval must be at least 10ms',
    ],
    [
      'watch --relist-interval 3000000s',
      ['watch', '-c', '__DIR__', '--kubeconfig', kubeconfig, '--relist-interval', '3000000s'],
      '--relist-interval must be at most 24h',
    ],
    ['watch --splay 25h', ['watch', '-c', '__DIR__', '--kubeconfig', kubeconfig, '--splay', '25h'], '--splay must be at most 24h'],
    [
      'watch --kill-timeout -1',
      ['watch', '-c', '__DIR__', '--kubeconfig', kubeconfig, '--kill-timeout', '-1'],
      '--kill-timeout must be a duration',
    ],
    [
      'watch --healthz-stale 0',
      ['watch', '-c', '__DIR__', '--kubeconfig', kubeconfig, '--healthz-stale', '0'],
      '--healthz-stale must be more than 0',
    ],
    [
      'rotate-par-identity --timeout 1e9',
      ['rotate-par-identity', '-c', '__DIR__', '--kubeconfig', kubeconfig, '--timeout', '1e9'],
      '--timeout must be a duration',
    ],
    [
      'rotate-par-identity --rollout-timeout 2d',
      ['rotate-par-identity', '-c', '__DIR__', '--kubeconfig', kubeconfig, '--rollout-timeout', '2d'],
      '--rollout-timeout must be at most 24h',
    ],
    [
      'status --secret --timeout 2h',
      ['status', '--secret', '-c', '__DIR__', '--kubeconfig', kubeconfig, '--timeout', '2h'],
      '--timeout must be at most 1h',
    ],
  ])('%s exits 2 with no connection made', async (_name, args, message) => {
    const before = connections;
    const run = await runCli(args.map((a) => (a === '__DIR__' ? dir : a)));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(connections).toBe(before);
  });

  it('--json renders the usage error as JSON on stdout', async () => {
    const run = await runCli(['rollout', 'deployment/x', '--poll-interval', 'NaN', '--json']);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'error', code: 'USAGE', exitCode: 2 });
  });
});

describe('a rejected value is quoted, as kubectl does', () => {
  it.each([
    ['emulator --port abc', ['emulator', '--port', 'abc'], '--port must be a port number from 0 to 65535, got "abc"'],
    [
      'emulator --kube --kube-port 70000',
      ['emulator', '--kube', '--kube-port', '70000'],
      '--kube-port must be a port number from 0 to 65535, got "70000"',
    ],
    [
      'rotate-identity --agent-version latest',
      ['rotate-identity', '-c', '__DIR__', '--agent-version', 'latest'],
      '--agent-version must be an agent version like 7.66.0 or 7.66.0+commit.abc1234, got "latest"',
    ],
    [
      'watch --listen nowhere',
      ['watch', '-c', '__DIR__', '--kubeconfig', '__KUBECONFIG__', '--listen', 'nowhere'],
      '--listen must be an address: PORT, :PORT or HOST:PORT (e.g. 127.0.0.1:9090), got "nowhere"',
    ],
    [
      'watch --signal-name BOOM',
      ['watch', '-c', '__DIR__', '--kubeconfig', '__KUBECONFIG__', '--signal-name', 'BOOM'],
      '--signal-name must be a signal name (HUP, USR1, USR2, TERM…), got "BOOM"',
    ],
    [
      'rotate-par-identity --rollout statefulset/x',
      ['rotate-par-identity', '-c', '__DIR__', '--kubeconfig', '__KUBECONFIG__', '--rollout', 'statefulset/x'],
      '--rollout must be deployment/<name> or daemonset/<name> (also deploy/ and ds/), got "statefulset/x"',
    ],
    [
      'rotate-identity --timeout soon',
      ['rotate-identity', '--timeout', 'soon'],
      '--timeout must be a duration with its unit, like 30s, 5m or 1500ms, got "soon"; for example: --timeout 30s',
    ],
  ])('%s: a usage error naming the flag, nothing contacted', async (_name, args, message) => {
    const before = connections;
    const run = await runCli(args.map((a) => (a === '__DIR__' ? dir : a === '__KUBECONFIG__' ? kubeconfig : a)));
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('error[USAGE]');
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toContain('This is a bug');
    expect(connections).toBe(before);
  });
});

describe('no key-like argument value is ever echoed', () => {
  it.each([
    ['--api-key=SECRET', ['status', `--api-key=${SECRET}`], "unknown option '--api-key'"],
    ['--api-key SECRET', ['status', '--api-key', SECRET], "unknown option '--api-key'"],
    ['--api-key SECRET on a command with arguments', ['watch', '--api-key', SECRET], "unknown option '--api-key'"],
    ['-kSECRET', ['rotate-identity', `-k${SECRET}`], "unknown option '-k'"],
    ['--api-key=SECRET before the command', [`--api-key=${SECRET}`, 'status'], "unknown option '--api-key'"],
    ['--timeout SECRET', ['rotate-identity', '--timeout', SECRET], `got a ${SECRET.length}-character value`],
    ['--timeout=SECRET', ['rotate-identity', `--timeout=${SECRET}`], `got a ${SECRET.length}-character value`],
    ['--poll-interval SECRET', ['rollout', 'deployment/x', '--poll-interval', SECRET], `got a ${SECRET.length}-character value`],
    ['--on-change SECRET', ['watch', '--on-change', SECRET], '--on-change must be one of restart, signal'],
    ['--signal SECRET', ['watch', '--signal', SECRET], '--signal must be a process id'],
    ['credentials SECRET', ['credentials', SECRET], '<action> must be one of set, show, delete'],
    ['completion SECRET', ['completion', SECRET], '<shell> must be one of bash, zsh, fish'],
    ['rollout SECRET', ['rollout', SECRET], 'the workload must be deployment/<name> or daemonset/<name>'],
    ['--agent-version SECRET', ['rotate-identity', '--agent-version', SECRET], `got a ${SECRET.length}-character value`],
    ['--listen SECRET', ['watch', '--listen', SECRET], `got a ${SECRET.length}-character value`],
    ['--signal-name SECRET', ['watch', '--signal-name', SECRET], `got a ${SECRET.length}-character value`],
    ['emulator --port SECRET', ['emulator', '--port', SECRET], `got a ${SECRET.length}-character value`],
  ])('%s: exit 2, the value nowhere in the output', async (_name, args, message) => {
    // completion has no JSON form.
    for (const json of args[0] === 'completion' ? [false] : [false, true]) {
      const run = await runCli(json ? [...args, '--json'] : args);
      expect(run.code).toBe(2);
      expect(`${run.stdout}${run.stderr}`).toContain(message);
      expect(run.stdout).not.toContain(SECRET);
      expect(run.stderr).not.toContain(SECRET);
      // Not even a fragment: the value is long enough that any 8 characters of it are distinctive.
      expect(`${run.stdout}${run.stderr}`).not.toContain(SECRET.slice(8, 16));
    }
  });
});
