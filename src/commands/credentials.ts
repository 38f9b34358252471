import type { CredentialsOptions } from '../cli/tool-commands.js';
import { checkSite } from '../config/endpoint.js';
import { loadAgentConfig } from '../config/index.js';
import {
  deleteProfile,
  KeychainUnavailableError,
  maskSecret,
  type Profile,
  PROFILE_FIELDS,
  readProfile,
  writeProfile,
} from '../credentials/index.js';
import { ConfigError, InterruptedError, stopSignalOf, stoppedBy, UsageError } from '../errors.js';
import type { Io } from '../io.js';
import { type CommandResult, createReporter, resultJson } from '../output.js';
import { commandLine } from '../command-line.js';
import { resolveSite } from '../config/datadog-site.js';
import { DEFAULT_CFGPATH, DEFAULT_PROFILE } from '../command-options.js';
import { programName } from '../single-executable.js';

/**
 * What a stopped credentials command says: nothing was stored, deleted or half-done. On SIGINT/SIGTERM
 * (`options.signal`, src/cli/stop-signals.ts) the key prompt or the stdin read ends at once, and nothing
 * is stored or deleted after it. The keychain writes of one profile are one synchronous sequence, so
 * a signal, handled between event-loop turns, never lands between two fields.
 */
function stopped(options: CredentialsOptions, what: string): InterruptedError {
  const again = commandLine([
    programName(),
    'credentials',
    options.action,
    ...(options.profile === DEFAULT_PROFILE ? [] : ['--profile', options.profile]),
  ]);
  return new InterruptedError(options.action, {
    message: `${stoppedBy(options.signal)} ${what}: keychain profile ${options.profile} unchanged`,
    hint: options.action === 'show' ? 'Nothing to undo (show only reads).' : `Nothing to undo. Run \`${again}\` again when you want.`,
    signal: stopSignalOf(options.signal),
    details: { action: options.action, profile: options.profile },
  });
}

/** Between two steps: a stop received meanwhile ends the command there. */
function checkStop(options: CredentialsOptions, what: string): void {
  if (options.signal?.aborted) throw stopped(options, what);
}

function checkKey(name: string, value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (/\s/.test(value) || value.startsWith('ENC[')) {
    throw new ConfigError(
      'CREDENTIAL_FORMAT',
      `the ${name} given is not a plain key (whitespace or an ENC[] handle)`,
      'Give the key itself, alone on its line. Nothing was stored.',
    );
  }
  return value;
}

/** Keys come from a hidden prompt on a terminal, else from stdin lines (API key, then app key): never argv. */
async function readKeys(io: Io, signal: AbortSignal | undefined): Promise<Profile> {
  if (io.stdinIsTTY) {
    const apiKey = await io.promptHidden('Datadog API key: ', signal);
    const appKey = await io.promptHidden('Datadog application key (empty for API-key-only enrollment): ', signal);
    return { api_key: apiKey.trim(), app_key: appKey.trim() };
  }
  const [apiKey = '', appKey = ''] = (await io.readStdin(signal)).split(/\r?\n/);
  return { api_key: apiKey.trim(), app_key: appKey.trim() };
}

async function set(options: CredentialsOptions, io: Io): Promise<CommandResult> {
  // A site stored is a site every later run uses: refused before the keys are asked for.
  if (options.site) checkSite(options.site, '--site');
  // Ctrl-C typed at the prompt is a character there, its own INTERRUPTED (io.ts); a signal from outside ends the read too.
  const keys = await readKeys(io, options.signal).catch((err: unknown) => {
    throw options.signal?.aborted ? stopped(options, 'while the keys were read, before anything was stored') : err;
  });
  checkStop(options, 'before anything was stored');
  const apiKey = checkKey('API key', keys.api_key);
  if (!apiKey)
    throw new UsageError(
      'no API key given',
      'Pipe it on the first line of stdin (application key on the second), or run on a terminal to be prompted.',
    );
  const values: Profile = { api_key: apiKey };
  const appKey = checkKey('application key', keys.app_key);
  if (appKey) values.app_key = appKey;
  if (options.site) values.site = options.site;
  // A signal from here on lets the writes finish (writeProfile: one synchronous sequence), and the result says what was stored.
  const written = await writeProfile(options.profile, values);
  return {
    json: resultJson('credentials set', { profile: options.profile, stored: written }),
    summary: [
      `stored in the OS keychain, profile ${options.profile}: ${written.join(', ')}`,
      ...written.filter((f) => f !== 'site').map((f) => `  ${f}: ${maskSecret(values[f]!)}`),
    ],
  };
}

/** The profile, or why the keychain cannot be read (no Secret Service, the single executable): `show` reports the rest. */
async function readStored(profile: string): Promise<{ stored: Profile; unavailable?: KeychainUnavailableError }> {
  try {
    return { stored: await readProfile(profile) };
  } catch (err) {
    if (err instanceof KeychainUnavailableError) return { stored: {}, unavailable: err };
    throw err;
  }
}

const shownValue = (field: string, value: string) => (field === 'site' ? value : maskSecret(value));

async function show(options: CredentialsOptions, io: Io): Promise<CommandResult> {
  checkStop(options, 'while reading');
  const { stored, unavailable } = await readStored(options.profile);
  checkStop(options, 'while reading');
  // The agent config may run its secrets backend (up to secret_backend_timeout).
  const config = await loadAgentConfig({
    cfgPath: options.cfgPath,
    extraFiles: options.extraCfg,
    env: io.env,
    given: options.cfgPath !== DEFAULT_CFGPATH,
  });
  checkStop(options, 'while reading');
  const fromProfile = `keychain profile ${options.profile}`;
  const set = (field: string) => config.sourceOf(field) !== 'default' && config.getString(field) !== undefined;
  // The order a rotation follows (docs/configuration.md): env and config first; the profile's site by
  // the one rule of every run (src/config/datadog-site.ts), only with its API key.
  const site = await resolveSite(config, io.env, undefined, async () => ({
    ...(stored.api_key ? { apiKey: stored.api_key } : {}),
    ...(stored.site ? { site: stored.site } : {}),
    profile: options.profile,
  }));
  const effective = PROFILE_FIELDS.map((field) => {
    if (field === 'site') return { field, source: site.siteSource, value: site.site };
    if (set(field)) return { field, source: config.sourceOf(field), value: shownValue(field, config.getString(field)!) };
    if (stored[field]) return { field, source: fromProfile, value: shownValue(field, stored[field]!) };
    return { field, source: 'not set', value: null };
  });
  const keychainLine = unavailable
    ? `keychain profile ${options.profile}: not read, ${unavailable.message}`
    : `keychain profile ${options.profile}: ${PROFILE_FIELDS.map((f) => `${f} ${stored[f] ? shownValue(f, stored[f]!) : '-'}`).join(', ')}`;
  return {
    json: resultJson('credentials show', {
      profile: options.profile,
      keychain: unavailable ? null : Object.fromEntries(PROFILE_FIELDS.map((f) => [f, stored[f] ? shownValue(f, stored[f]!) : null])),
      ...(unavailable ? { keychainUnavailable: unavailable.message } : {}),
      effective,
    }),
    summary: [
      keychainLine,
      'used by a rotation now (flags --api-key-file/--app-key-file, when given, come first):',
      ...effective.map((e) => `  ${e.field.padEnd(8)} ${e.value ?? '-'}  (${e.source})`),
    ],
  };
}

async function remove(options: CredentialsOptions): Promise<CommandResult> {
  checkStop(options, 'before anything was deleted');
  // As for set: the deletions of one profile are one synchronous sequence, never cut between two fields.
  const deleted = await deleteProfile(options.profile);
  return {
    json: resultJson('credentials delete', { profile: options.profile, deleted }),
    summary: [
      deleted.length
        ? `deleted from the OS keychain, profile ${options.profile}: ${deleted.join(', ')}`
        : `profile ${options.profile} held nothing`,
    ],
  };
}

export async function run(options: CredentialsOptions, io: Io): Promise<CommandResult> {
  createReporter(io, options).step(`OS keychain, profile ${options.profile}`);
  if (options.action === 'set') return set(options, io);
  if (options.action === 'show') return show(options, io);
  return remove(options);
}
