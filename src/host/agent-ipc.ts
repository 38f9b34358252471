import { boundedExchange } from './bounded-exchange.js';
import { isLoopback } from '../net/ip.js';
import { dirname, join } from 'node:path';
import type { AgentConfig } from '../config/agent-config.js';
import { readUnlessPlanted } from '../storage/plantable-file.js';
import { configNumber } from './config-values.js';
import { hostnameProblem } from './hostname-validation.js';

// The running agent's IPC API (docs/protocol.md §4b): what the runner itself asks before resolving a
// hostname. The auth token is only ever sent to a loopback address and over TLS pinned to the
// agent's own IPC certificate, which is also presented as the client certificate. Token and
// certificate are never taken from a stranger: they sit beside the identity (docs/security.md §1).

interface IpcEndpoint {
  host: string;
  port: number;
  token: string;
  /** Certificate blocks of ipc_cert.pem (CA and client certificate). */
  cert: string;
  key: string;
}

type IpcSetup = { ok: true; endpoint: IpcEndpoint } | { ok: false; reason: string };

function pemBlocks(text: string, kind: RegExp): string {
  return (text.match(/-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g) ?? []).filter((b) => kind.test(b.split('\n')[0]!)).join('\n');
}

/** Far more than a token or a certificate with its key. */
const MAX_IPC_FILE_BYTES = 64 * 1024;

/** The file's text; undefined when it is not there; `refused` when it may have been planted (src/storage/plantable-file.ts). */
async function readIpcFile(path: string): Promise<string | undefined | { refused: string }> {
  const read = await readUnlessPlanted(path, MAX_IPC_FILE_BYTES);
  if (read.state === 'ok') return read.content.toString('utf8');
  return read.state === 'refused' ? { refused: read.why } : undefined;
}

/** Where the token and certificate are, and whether the agent may be asked at all. Never throws. */
export async function ipcSetup(config: AgentConfig): Promise<IpcSetup> {
  const port = configNumber(config, 'cmd_port', 5001);
  if (!(port > 0)) return { ok: false, reason: `cmd_port is ${port} (IPC disabled)` };
  const host = config.getString('cmd_host') ?? 'localhost';
  if (!isLoopback(host)) return { ok: false, reason: `cmd_host ${host} is not a loopback address; the auth token is never sent elsewhere` };
  const configDir = config.file ? dirname(config.file) : undefined;
  const tokenPath = config.getString('auth_token_file_path') ?? (configDir ? join(configDir, 'auth_token') : undefined);
  if (!tokenPath) return { ok: false, reason: 'no auth_token_file_path and no config file to find auth_token next to' };
  // Beside the identity, in a directory others may be able to write: a stranger's token or certificate is never used.
  const tokenText = await readIpcFile(tokenPath);
  if (typeof tokenText === 'object') return { ok: false, reason: tokenText.refused };
  const token = tokenText?.trim();
  if (!token) return { ok: false, reason: `no auth token readable at ${tokenPath}` };
  const certCandidates = [
    config.getString('ipc_cert_file_path'),
    join(dirname(tokenPath), 'ipc_cert.pem'),
    configDir ? join(configDir, 'ipc_cert.pem') : undefined,
  ];
  for (const path of certCandidates) {
    if (!path) continue;
    const pem = await readIpcFile(path);
    if (typeof pem === 'object') return { ok: false, reason: pem.refused };
    if (pem === undefined) {
      if (path === certCandidates[0]) return { ok: false, reason: `ipc_cert_file_path ${path} is not readable` };
      continue;
    }
    const cert = pemBlocks(pem, /CERTIFICATE/);
    const key = pemBlocks(pem, /PRIVATE KEY/);
    if (!cert || !key) return { ok: false, reason: `${path} does not hold both a certificate and a key` };
    // The agent binds `localhost` to 127.0.0.1 (Go prefers IPv4); connecting there avoids a ::1 detour. Its certificate names both.
    return { ok: true, endpoint: { host: host === 'localhost' ? '127.0.0.1' : host.replace(/^\[|\]$/g, ''), port, token, cert, key } };
  }
  return { ok: false, reason: `no IPC certificate (ipc_cert.pem) next to ${tokenPath}` };
}

interface IpcAnswer {
  status: number;
  body: string;
}

async function ipcGet(endpoint: IpcEndpoint, path: string, timeoutMs: number): Promise<IpcAnswer> {
  // Loaded when an agent is there to ask: TLS costs a process about 4 MiB (see http-exchange.ts).
  const { request } = await import('node:https');
  return boundedExchange(
    (onResponse) =>
      request(
        {
          host: endpoint.host,
          port: endpoint.port,
          path,
          method: 'GET',
          headers: { Authorization: `Bearer ${endpoint.token}`, Accept: 'application/json' },
          ca: endpoint.cert,
          cert: endpoint.cert,
          key: endpoint.key,
          // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED can never turn verification off.
          rejectUnauthorized: true,
          agent: false,
          timeout: timeoutMs,
        },
        onResponse,
      ),
    timeoutMs,
    'IPC',
  );
}

export interface IpcOptions {
  tries?: number;
  timeoutMs?: number;
  pauseMs?: number;
}

/**
 * GET with a few short tries: an agent that is restarting refuses connections for a moment.
 * 401/403/404 are final (retrying cannot fix a token or an endpoint).
 */
async function askAgent(
  endpoint: IpcEndpoint,
  path: string,
  options: IpcOptions = {},
): Promise<{ ok: true; body: string } | { ok: false; reason: string }> {
  const tries = options.tries ?? 3;
  let reason = 'not asked';
  for (let n = 1; n <= tries; n++) {
    try {
      const res = await ipcGet(endpoint, path, options.timeoutMs ?? 1000);
      if (res.status === 200) return { ok: true, body: res.body };
      reason = res.status === 401 || res.status === 403 ? `HTTP ${res.status} (the auth token was refused)` : `HTTP ${res.status}`;
      if (res.status < 500) break;
    } catch (err) {
      const e = err as { code?: string; message?: string };
      reason = e.code ?? e.message ?? String(err);
      if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(reason)) break;
    }
    if (n < tries) await new Promise((r) => setTimeout(r, options.pauseMs ?? 200));
  }
  return { ok: false, reason };
}

/** GET /agent/hostname: a JSON string; "" means the agent could not resolve one (a failure here). */
export async function agentHostname(
  endpoint: IpcEndpoint,
  options?: IpcOptions,
): Promise<{ ok: true; hostname: string } | { ok: false; reason: string }> {
  const res = await askAgent(endpoint, '/agent/hostname', options);
  if (!res.ok) return res;
  let value: unknown;
  try {
    value = JSON.parse(res.body);
  } catch {
    return { ok: false, reason: 'the answer is not JSON' };
  }
  if (typeof value !== 'string') return { ok: false, reason: 'the answer is not a JSON string' };
  if (value === '') return { ok: false, reason: 'the agent answered "" (it could not resolve a hostname)' };
  // The agent validates its own hostname: anything else did not come from its chain, and is neither
  // written into an identity nor printed.
  const problem = hostnameProblem(value);
  if (problem) return { ok: false, reason: `the agent answered a hostname it would refuse itself (${problem})` };
  return { ok: true, hostname: value };
}

/** The agent's version in its own format (7.66.0+commit.abc1234), from GET /agent/version. */
export async function agentVersion(
  endpoint: IpcEndpoint,
  options?: IpcOptions,
): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
  const res = await askAgent(endpoint, '/agent/version', options);
  if (!res.ok) return res;
  try {
    const v = JSON.parse(res.body) as Record<string, unknown>;
    const version = formatAgentVersion(v);
    return version ? { ok: true, version } : { ok: false, reason: 'the answer is not a version object' };
  } catch {
    return { ok: false, reason: 'the answer is not JSON' };
  }
}

/** pkg/version Version.String(): N.N.N[-Pre][+Meta][(+|.)commit.Commit]. */
// exported for tests: pkg/version's String() forms, checked one by one
export function formatAgentVersion(v: Record<string, unknown>): string | undefined {
  const num = (k: string) => (typeof v[k] === 'number' && Number.isInteger(v[k]) && (v[k] as number) >= 0 ? (v[k] as number) : undefined);
  const str = (k: string) => (typeof v[k] === 'string' ? (v[k] as string) : '');
  const [major, minor, patch] = [num('Major'), num('Minor'), num('Patch')];
  if (major === undefined || minor === undefined || patch === undefined) return undefined;
  let out = `${major}.${minor}.${patch}`;
  const safe = (s: string) => /^[0-9A-Za-z.-]*$/.test(s);
  const [pre, meta, commit] = [str('Pre'), str('Meta'), str('Commit')];
  if (!safe(pre) || !safe(meta) || !safe(commit)) return undefined;
  if (pre) out += `-${pre}`;
  if (meta) out += `+${meta}`;
  if (commit) out += meta ? `.commit.${commit}` : `+commit.${commit}`;
  return out;
}
