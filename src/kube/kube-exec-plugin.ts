import { spawn } from 'node:child_process';
import { createSecureContext } from 'node:tls';
import { KubernetesError } from '../errors.js';
import { sanitizeServerString } from '../sanitize.js';
import type { Deadline } from '../time/index.js';
import type { KubeCluster, KubeExecConfig } from './kubeconfig.js';

// An exec credential plugin run as kubectl runs it (client-go plugin/pkg/client/auth/exec; facts in
// docs/kubernetes-client.md): the environment plus the kubeconfig's env, KUBERNETES_EXEC_INFO with
// spec.interactive (and spec.cluster under provideClusterInfo), the terminal's stdin only when
// interactive, and its ExecCredential checked as kubectl checks it. Two things kubectl does not do:
// the plugin has a time limit (kubectl waits for ever) and its output a size limit; its stderr is
// kept for the error message instead of being copied to ours, unless it runs interactively.

/** What a plugin may take: long enough for a token service, not for ever. A login flow gets more. */
const EXEC_PLUGIN_TIMEOUT_MS = 60_000;
const EXEC_PLUGIN_INTERACTIVE_TIMEOUT_MS = 5 * 60_000;
/** An ExecCredential is a few KiB (a token, or a certificate and key). */
// exported for tests: the test's plugin writes past it
export const MAX_EXEC_OUTPUT_BYTES = 1024 * 1024;
const MAX_EXEC_STDERR_BYTES = 64 * 1024;

export interface ExecCredentialResult {
  token?: string;
  cert?: string;
  key?: string;
  /** ms since the epoch; undefined: valid until the server refuses it. */
  expiresAt?: number;
}

interface ExecRunOptions {
  env: NodeJS.ProcessEnv;
  /** Our stdin is a terminal: IfAvailable and Always plugins may talk to the operator. */
  stdinIsTerminal: boolean;
  /** The command's deadline, when it has one: the plugin never outlives it. */
  deadline?: Deadline;
}

function credentialError(message: string, exec: KubeExecConfig, details: Record<string, string | number | null> = {}): KubernetesError {
  return new KubernetesError(
    'KUBE_CREDENTIALS',
    `the kubeconfig's exec credential plugin ${exec.command}: ${message}`,
    'Nothing was changed. Run the plugin by hand (or `kubectl get --raw /version` with the same kubeconfig) to see what it needs, then run again.',
    { plugin: exec.command, ...details },
  );
}

/** kubectl's interactive decision (exec.go isInteractive): Never, IfAvailable (stdin a terminal), Always (or fail). */
function isInteractive(exec: KubeExecConfig, stdinIsTerminal: boolean): boolean {
  if (exec.interactiveMode === 'Never') return false;
  if (exec.interactiveMode === 'Always') {
    if (!stdinIsTerminal) throw credentialError('exec plugin cannot support interactive mode: standard input is not a terminal', exec);
    return true;
  }
  return stdinIsTerminal;
}

/** spec.cluster of KUBERNETES_EXEC_INFO (client-go ConfigToExecCluster), kubectl's field order, empty fields left out. */
function execClusterInfo(cluster: KubeCluster, caData: Buffer | undefined): Record<string, unknown> {
  const info: Record<string, unknown> = { server: cluster.server };
  if (cluster.tlsServerName) info['tls-server-name'] = cluster.tlsServerName;
  if (cluster.insecureSkipTlsVerify) info['insecure-skip-tls-verify'] = true;
  if (caData?.length) info['certificate-authority-data'] = caData.toString('base64');
  if (cluster.proxyUrl) info['proxy-url'] = cluster.proxyUrl;
  if (cluster.disableCompression) info['disable-compression'] = true;
  const config = cluster.extensions['client.authentication.k8s.io/exec'];
  if (config !== undefined && config !== null) info.config = config;
  return info;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The ExecCredential on stdout, checked as client-go checks it. */
function readCredential(stdout: string, exec: KubeExecConfig): ExecCredentialResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw credentialError(`decoding stdout: not JSON (${stdout.length} characters)`, exec);
  }
  if (!isObject(parsed) || parsed.kind !== 'ExecCredential') throw credentialError('decoding stdout: not an ExecCredential', exec);
  if (parsed.apiVersion !== exec.apiVersion) {
    throw credentialError(
      `exec plugin is configured to use API version ${exec.apiVersion}, plugin returned version ${sanitizeServerString(parsed.apiVersion ?? '', 80)}`,
      exec,
    );
  }
  const status = parsed.status;
  if (!isObject(status)) throw credentialError("exec plugin didn't return a status field", exec);
  const text = (key: string) => (typeof status[key] === 'string' ? (status[key] as string) : '');
  const token = text('token');
  const cert = text('clientCertificateData');
  const key = text('clientKeyData');
  if (!token && !cert && !key) throw credentialError("exec plugin didn't return a token or cert/key pair", exec);
  if (!cert !== !key) throw credentialError('exec plugin returned only certificate or key, not both', exec);
  if (cert) {
    try {
      createSecureContext({ cert, key });
    } catch {
      throw credentialError('failed parsing client key/certificate', exec);
    }
  }
  const expiry = text('expirationTimestamp');
  const expiresAt = expiry ? Date.parse(expiry) : undefined;
  if (expiresAt !== undefined && Number.isNaN(expiresAt))
    throw credentialError('decoding stdout: status.expirationTimestamp is not a time', exec);
  return { ...(token ? { token } : {}), ...(cert ? { cert, key } : {}), ...(expiresAt !== undefined ? { expiresAt } : {}) };
}

/** The last line of what the plugin said on stderr, made safe to print. */
function lastWords(stderr: string): string {
  const line = stderr.trim().split('\n').at(-1)?.trim();
  return line ? `: ${sanitizeServerString(line, 300)}` : '';
}

/** Runs the plugin once and returns its credential; throws KubernetesError KUBE_CREDENTIALS. */
export function runExecPlugin(
  exec: KubeExecConfig,
  cluster: KubeCluster,
  caData: Buffer | undefined,
  options: ExecRunOptions,
): Promise<ExecCredentialResult> {
  const interactive = isInteractive(exec, options.stdinIsTerminal);
  const spec: Record<string, unknown> = {};
  if (exec.provideClusterInfo) spec.cluster = execClusterInfo(cluster, caData);
  spec.interactive = interactive;
  const env: NodeJS.ProcessEnv = { ...options.env };
  for (const { name, value } of exec.env) env[name] = value;
  env.KUBERNETES_EXEC_INFO = JSON.stringify({ kind: 'ExecCredential', apiVersion: exec.apiVersion, spec });
  const limit = interactive ? EXEC_PLUGIN_INTERACTIVE_TIMEOUT_MS : EXEC_PLUGIN_TIMEOUT_MS;
  const remaining = options.deadline?.remainingMs();
  const timeoutMs = Math.max(0, Math.floor(remaining !== undefined && remaining < limit ? remaining : limit));
  const limitedBy = remaining !== undefined && remaining < limit ? 'the command deadline' : 'its time limit';

  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: KubernetesError | undefined, result?: ExecCredentialResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(result!);
    };
    const child = spawn(exec.command, exec.args, {
      env,
      stdio: [interactive ? 'inherit' : 'ignore', 'pipe', interactive ? 'inherit' : 'pipe'],
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(
        credentialError(`no credential within ${Math.floor(timeoutMs / 100) / 10} s (${limitedBy}); the plugin was stopped`, exec, {
          timeoutMs,
        }),
      );
    }, timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_EXEC_OUTPUT_BYTES) {
        child.kill('SIGKILL');
        finish(credentialError(`wrote more than ${MAX_EXEC_OUTPUT_BYTES / 1024 / 1024} MiB on stdout; the plugin was stopped`, exec));
        return;
      }
      out.push(chunk);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < MAX_EXEC_STDERR_BYTES) stderr += chunk.slice(0, MAX_EXEC_STDERR_BYTES - stderr.length);
    });
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') {
        const hint = exec.installHint ? ` (${sanitizeServerString(exec.installHint, 300)})` : '';
        finish(credentialError(`exec: executable ${exec.command} not found${hint}`, exec));
      } else finish(credentialError(`exec: ${err.message}`, exec));
    });
    child.once('close', (code, signal) => {
      if (code !== 0) {
        finish(
          credentialError(
            `exec: executable ${exec.command} failed with ${signal ? `signal ${signal}` : `exit code ${code}`}${lastWords(stderr)}`,
            exec,
            { exitCode: code },
          ),
        );
        return;
      }
      try {
        finish(undefined, readCredential(Buffer.concat(out).toString('utf8'), exec));
      } catch (err) {
        finish(err as KubernetesError);
      }
    });
  });
}
