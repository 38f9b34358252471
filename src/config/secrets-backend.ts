import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { type CodeOf, ConfigError } from '../errors.js';
import { sanitizeServerString } from '../sanitize.js';
import type { AgentConfig } from './agent-config.js';

// The agent's secrets backend (comp/core/secrets, docs/protocol.md §10): ENC[handle] values are resolved by
// ONE run of secret_backend_command with every handle, JSON on stdin, JSON on stdout, under a
// timeout and an output cap, after the agent's permission checks on the command file. Every
// failure is a config error that names the handle and never a value; stderr is never shown, as a
// backend may print what it fetched there.

interface SecretBackendSettings {
  command: string;
  arguments: string[];
  timeoutSeconds: number;
  outputMaxSize: number;
  allowGroupExec: boolean;
  removeTrailingLineBreak: boolean;
  type?: string;
  config?: Record<string, unknown>;
  /** The bundled secret-generic-connector (secret_backend_type only): no permission check, as upstream. */
  embedded: boolean;
}

/** Where the agent's packages put the bundled backend (`<install>/embedded/bin/`). */
const EMBEDDED_SECRET_BACKEND = '/opt/datadog-agent/embedded/bin/secret-generic-connector';
const SECRET_PAYLOAD_VERSION = '1.1';

/** The handle of an ENC[...] value (spaces and tabs around it trimmed, as upstream), else undefined. */
export function secretHandle(value: string): string | undefined {
  const trimmed = value.replace(/^[ \t]+|[ \t]+$/g, '');
  return trimmed.startsWith('ENC[') && trimmed.endsWith(']') ? trimmed.slice(4, -1) : undefined;
}

function numberOr(config: AgentConfig, key: string, fallback: number): number {
  const raw = config.getString(key);
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

export function secretBackendSettings(config: AgentConfig): SecretBackendSettings | undefined {
  const type = config.getString('secret_backend_type');
  const command = config.getString('secret_backend_command') ?? (type ? EMBEDDED_SECRET_BACKEND : undefined);
  if (!command) return undefined;
  const rawArgs = config.get('secret_backend_arguments');
  const args = Array.isArray(rawArgs) ? rawArgs.map(String) : typeof rawArgs === 'string' ? rawArgs.split(/\s+/).filter(Boolean) : [];
  const rawConfig = config.get('secret_backend_config');
  let backendConfig: Record<string, unknown> | undefined;
  if (rawConfig && typeof rawConfig === 'object' && !Array.isArray(rawConfig)) backendConfig = rawConfig as Record<string, unknown>;
  else if (typeof rawConfig === 'string' && rawConfig.trim()) {
    try {
      backendConfig = JSON.parse(rawConfig) as Record<string, unknown>;
    } catch {
      throw new ConfigError(
        'SECRET_BACKEND_CONFIG',
        `secret_backend_config (${config.sourceOf('secret_backend_config')}) is not a JSON object`,
        'Set it as a YAML mapping, or DD_SECRET_BACKEND_CONFIG as a JSON object.',
      );
    }
  }
  return {
    command,
    arguments: args,
    timeoutSeconds: numberOr(config, 'secret_backend_timeout', 30),
    outputMaxSize: numberOr(config, 'secret_backend_output_max_size', 1024 * 1024),
    allowGroupExec: config.getBool('secret_backend_command_allow_group_exec_perm'),
    removeTrailingLineBreak: config.getBool('secret_backend_remove_trailing_line_break'),
    ...(type ? { type } : {}),
    ...(backendConfig && Object.keys(backendConfig).length ? { config: backendConfig } : {}),
    embedded: !config.getString('secret_backend_command'),
  };
}

function fail(code: CodeOf<'ConfigError'>, message: string, handles: string[], hint: string): never {
  throw new ConfigError(code, message, `Nothing was changed. ${hint}`, { handles });
}

async function findExecutable(command: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (command.includes('/')) return command;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next PATH entry
    }
  }
  return undefined;
}

/** CheckRights: no rights at all for others; none for the group either, except read+exec when allowed. */
async function checkBackendRights(path: string, allowGroupExec: boolean): Promise<string | undefined> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (err) {
    return `invalid executable '${path}': can't stat it: ${(err as NodeJS.ErrnoException).code ?? err}`;
  }
  if (allowGroupExec) {
    if (mode & 0o027) return `invalid executable '${path}', 'others' have rights on it or 'group' has write permissions on it`;
  } else if (mode & 0o077) {
    return `invalid executable '${path}', 'group' or 'others' have rights on it`;
  }
  try {
    await access(path, constants.X_OK);
  } catch (err) {
    return `invalid executable '${path}': can't access it: ${(err as NodeJS.ErrnoException).code ?? err}`;
  }
  return undefined;
}

/** Go marshals a map with sorted keys: the payload is byte-identical to the agent's. */
function secretPayload(handles: string[], settings: SecretBackendSettings): string {
  const payload: Record<string, unknown> = {
    secret_backend_timeout: settings.timeoutSeconds,
    secrets: handles,
    version: SECRET_PAYLOAD_VERSION,
  };
  if (settings.type) payload.type = settings.type;
  if (settings.config) payload.config = settings.config;
  return JSON.stringify(Object.fromEntries(Object.entries(payload).sort(([a], [b]) => (a < b ? -1 : 1))));
}

interface RunOutcome {
  stdout: Buffer;
  stderrBytes: number;
  failure?: string;
}

function runBackend(path: string, settings: SecretBackendSettings, input: string, env: NodeJS.ProcessEnv): Promise<RunOutcome> {
  return new Promise((resolve) => {
    const child = spawn(path, settings.arguments, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let failure: string | undefined;
    const stop = (why: string) => {
      failure ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop('command timeout'), settings.timeoutSeconds * 1000);
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > settings.outputMaxSize) stop(`command output was too long: exceeded ${settings.outputMaxSize} bytes`);
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      errBytes += chunk.length;
      if (errBytes > settings.outputMaxSize) stop(`command output was too long: exceeded ${settings.outputMaxSize} bytes`);
    });
    child.on('error', (err) => {
      failure ??= (err as NodeJS.ErrnoException).code ?? err.message;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (!failure && code !== 0) failure = signal ? `killed by ${signal}` : `exit status ${code}`;
      resolve({ stdout: Buffer.concat(out), stderrBytes: errBytes, ...(failure ? { failure } : {}) });
    });
    // A backend that exits without reading stdin must not turn into an EPIPE crash.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/**
 * Resolves every handle in one run of the backend. Returns handle → value. `labels` names where
 * each handle was found (api_key from env DD_API_KEY, …) for the error messages.
 */
export async function resolveSecretHandles(
  handles: string[],
  settings: SecretBackendSettings,
  env: NodeJS.ProcessEnv,
  labels: Record<string, string> = {},
): Promise<Map<string, string>> {
  const unique = [...new Set(handles)];
  const named = unique.map((h) => `${labels[h] ?? 'a config value'} (ENC[${h}])`).join(', ');
  const path = await findExecutable(settings.command, env);
  if (!path)
    fail(
      'SECRET_BACKEND_FAILED',
      `secret_backend_command ${settings.command} was not found (needed for ${named})`,
      unique,
      'Set secret_backend_command to the path the agent uses.',
    );
  if (!settings.embedded) {
    const problem = await checkBackendRights(path, settings.allowGroupExec);
    if (problem) {
      const modes = settings.allowGroupExec ? '700, or 750 with secret_backend_command_allow_group_exec_perm' : '700';
      fail(
        'SECRET_BACKEND_PERMISSIONS',
        `${problem} (needed for ${named})`,
        unique,
        `The agent refuses it too: make it executable by its owner only (chmod ${modes}).`,
      );
    }
  }
  const run = await runBackend(path, settings, secretPayload(unique, settings), env);
  if (run.failure) {
    fail(
      'SECRET_BACKEND_FAILED',
      `error while running '${settings.command}' for ${named}: ${run.failure}${run.stderrBytes ? ` (stderr: ${run.stderrBytes} bytes, not shown)` : ''}`,
      unique,
      'Run the backend by hand as the agent would, or raise secret_backend_timeout / secret_backend_output_max_size.',
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(run.stdout.toString('utf8'));
  } catch {
    fail(
      'SECRET_BACKEND_FAILED',
      `could not unmarshal 'secret_backend_command' output for ${named}: not JSON (${run.stdout.length} bytes)`,
      unique,
      'The backend must print {"<handle>":{"value":"…"}}.',
    );
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    fail(
      'SECRET_BACKEND_FAILED',
      `could not unmarshal 'secret_backend_command' output for ${named}: not a JSON object`,
      unique,
      'The backend must print {"<handle>":{"value":"…"}}.',
    );
  }
  const answers = parsed as Record<string, unknown>;
  const result = new Map<string, string>();
  for (const handle of unique) {
    const where = `${labels[handle] ?? 'a config value'} (ENC[${handle}])`;
    const entry = answers[handle];
    if (entry === undefined)
      fail(
        'SECRET_UNRESOLVED',
        `secret handle '${handle}' was not resolved by the secret_backend_command (${where})`,
        [handle],
        'Check the handle name in the agent config and in the backend.',
      );
    if (!entry || typeof entry !== 'object' || Array.isArray(entry))
      fail(
        'SECRET_BACKEND_FAILED',
        `could not unmarshal 'secret_backend_command' output: the entry for '${handle}' is not an object`,
        [handle],
        'The backend must print {"<handle>":{"value":"…"}}.',
      );
    const { value, error } = entry as { value?: unknown; error?: unknown };
    if ((value !== undefined && typeof value !== 'string') || (error !== undefined && error !== null && typeof error !== 'string')) {
      fail(
        'SECRET_BACKEND_FAILED',
        `could not unmarshal 'secret_backend_command' output: the entry for '${handle}' has a non-string value or error`,
        [handle],
        'The backend must print {"<handle>":{"value":"…"}}.',
      );
    }
    if (typeof error === 'string' && error !== '') {
      // The backend's own error text is its message, not a secret; still shown only as its length-bounded first line.
      const said = sanitizeServerString(error.split('\n')[0], 200);
      fail(
        'SECRET_UNRESOLVED',
        `an error occurred while resolving '${handle}' (${where}): ${said}`,
        [handle],
        'Fix what the backend reports, then run again.',
      );
    }
    let resolved = typeof value === 'string' ? value : '';
    if (settings.removeTrailingLineBreak) resolved = resolved.replace(/[\r\n]+$/, '');
    if (resolved === '')
      fail(
        'SECRET_UNRESOLVED',
        `resolved secret for '${handle}' is empty (${where})`,
        [handle],
        'Store a value for that handle in the backend.',
      );
    result.set(handle, resolved);
  }
  return result;
}
