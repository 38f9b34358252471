import { ParError } from '../errors.js';
import { runningAsSingleExecutable } from '../single-executable.js';
import { VERSION } from '../version.js';

// The OS keychain through @napi-rs/keyring (keytar-compatible, its native binary ships inside the
// npm package). Loaded only when a keychain is actually used, so the CLI runs where it is absent.

const KEYCHAIN_SERVICE = 'par-identity';
export const PROFILE_FIELDS = ['api_key', 'app_key', 'site'] as const;
type ProfileField = (typeof PROFILE_FIELDS)[number];
export type Profile = Partial<Record<ProfileField, string>>;

type KeyringModule = typeof import('@napi-rs/keyring');
let loaded: Promise<KeyringModule> | undefined;

const NO_KEYCHAIN_HINT =
  'Use --api-key-file/--app-key-file (a path, or - for stdin) or DD_API_KEY/DD_APP_KEY instead ' +
  '(containers usually have no Secret Service). On a Linux desktop, unlock GNOME Keyring or KWallet.';

export class KeychainUnavailableError extends ParError {
  constructor(reason: string, hint = NO_KEYCHAIN_HINT) {
    super('KEYCHAIN_UNAVAILABLE', `the OS keychain is not available here: ${reason}`, hint, { reason });
  }
}

async function keyring(): Promise<KeyringModule> {
  // The single executable cannot load a native module from its blob: say so instead of a "module not found".
  if (runningAsSingleExecutable()) {
    throw new KeychainUnavailableError(
      'the single executable has no keychain (the native keychain module ships only with the npm package)',
      'Give the keys with --api-key-file/--app-key-file (a path, or - for stdin) or DD_API_KEY/DD_APP_KEY, ' +
        'or api_key/app_key in the agent config; or, where a keychain is needed, ' +
        'the npm package installed from a checkout ' +
        `(npm ci && npm pack, then npm install -g ./par-identity-${VERSION}.tgz: docs/install.md).`,
    );
  }
  loaded ??= import('@napi-rs/keyring').catch((err: Error) => {
    loaded = undefined;
    throw new KeychainUnavailableError(`the keychain module could not be loaded (${err.message.split('\n')[0]})`);
  });
  return loaded;
}

function accountOf(profile: string, field: ProfileField): string {
  return `${profile}:${field}`;
}

/** Errors from the platform store say "no Secret Service", "locked", ... ; never a value. */
function unavailable(err: unknown): KeychainUnavailableError {
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return new KeychainUnavailableError(message ?? 'unknown error');
}

export async function readProfile(profile: string): Promise<Profile> {
  const { Entry, findCredentials } = await keyring();
  // getPassword answers null, as for an empty profile, when no Secret Service can be reached; the search
  // throws instead ("Failed to connect to address …"), so an unavailable keychain is never read as empty.
  try {
    findCredentials(KEYCHAIN_SERVICE);
  } catch (err) {
    throw unavailable(err);
  }
  const out: Profile = {};
  for (const field of PROFILE_FIELDS) {
    let value: string | null | undefined;
    try {
      value = new Entry(KEYCHAIN_SERVICE, accountOf(profile, field)).getPassword();
    } catch (err) {
      throw unavailable(err);
    }
    if (value) out[field] = value;
  }
  return out;
}

export async function writeProfile(profile: string, values: Profile): Promise<ProfileField[]> {
  const { Entry } = await keyring();
  const written: ProfileField[] = [];
  for (const field of PROFILE_FIELDS) {
    const value = values[field];
    if (!value) continue;
    try {
      new Entry(KEYCHAIN_SERVICE, accountOf(profile, field)).setPassword(value);
    } catch (err) {
      throw unavailable(err);
    }
    written.push(field);
  }
  return written;
}

export async function deleteProfile(profile: string): Promise<ProfileField[]> {
  const { Entry } = await keyring();
  const deleted: ProfileField[] = [];
  for (const field of PROFILE_FIELDS) {
    try {
      if (new Entry(KEYCHAIN_SERVICE, accountOf(profile, field)).deletePassword()) deleted.push(field);
    } catch (err) {
      throw unavailable(err);
    }
  }
  return deleted;
}

/** Last four characters: enough to tell keys apart, useless to an onlooker. */
export function maskSecret(value: string): string {
  return value.length <= 8 ? '****' : `…${value.slice(-4)}`;
}
