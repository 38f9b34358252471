import { IdentityDecodeError } from '../errors.js';
import { sanitizeServerString } from '../sanitize.js';
import { decodePrivateJwk, type PrivateIdentityKey } from './private-jwk.js';
import { parseUrn, type RunnerUrn } from './urn.js';

// The identity file's JSON (docs/protocol.md §5): compact, fixed key order, no trailing newline, empty
// optional fields omitted — byte-for-byte what the Go agent writes and reads.

export interface IdentityRecord {
  /** base64url JWK string, exactly as stored. */
  privateKey: string;
  urn: string;
  hostname?: string;
  apiKeyHash?: string;
  orchClusterId?: string;
  /**
   * Keys of the file this tool does not know (a newer agent's, docs/protocol.md §5), sorted, names
   * sanitised; a rewrite would drop them. Absent when there are none.
   */
  unknownFields?: string[];
}

export interface DecodedIdentity {
  record: IdentityRecord;
  key: PrivateIdentityKey;
  urn: RunnerUrn;
}

export function serializeIdentityFile(record: IdentityRecord): string {
  const out: Record<string, string> = { private_key: record.privateKey, urn: record.urn };
  if (record.hostname) out.hostname = record.hostname;
  if (record.apiKeyHash) out.api_key_hash = record.apiKeyHash;
  return JSON.stringify(out);
}

function optionalString(obj: Record<string, unknown>, key: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new IdentityDecodeError(key, 'is not a string');
  return value === '' ? undefined : value;
}

/** The keys of the identity file this tool reads and writes (docs/protocol.md §5). */
const KNOWN_FILE_KEYS = new Set(['private_key', 'urn', 'hostname', 'api_key_hash', 'orch_cluster_id']);

/** At most this many unknown names are kept (a hostile file could hold thousands). */
const MAX_UNKNOWN_SHOWN = 20;

/** Names of `keys` outside `known`, sanitised and bounded, for messages and --json. */
export function unknownNames(keys: Iterable<string>, known: (key: string) => boolean): string[] {
  const names = [...keys].filter((k) => !known(k)).sort();
  const shown = names.slice(0, MAX_UNKNOWN_SHOWN).map((k) => sanitizeServerString(k, 80));
  return names.length > MAX_UNKNOWN_SHOWN ? [...shown, `… ${names.length - MAX_UNKNOWN_SHOWN} more`] : shown;
}

/** Parses the file text; unknown keys are ignored as the Go reader does, and named in `unknownFields`. */
export function parseIdentityFile(text: string): IdentityRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new IdentityDecodeError('file', 'is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new IdentityDecodeError('file', 'is not a JSON object');
  }
  const obj = parsed as Record<string, unknown>;
  const privateKey = optionalString(obj, 'private_key');
  const urn = optionalString(obj, 'urn');
  if (!privateKey) throw new IdentityDecodeError('private_key', 'is missing or empty');
  if (!urn) throw new IdentityDecodeError('urn', 'is missing or empty');
  const record: IdentityRecord = { privateKey, urn };
  const hostname = optionalString(obj, 'hostname');
  const hash = optionalString(obj, 'api_key_hash');
  const cluster = optionalString(obj, 'orch_cluster_id');
  if (hostname) record.hostname = hostname;
  if (hash) record.apiKeyHash = hash;
  if (cluster) record.orchClusterId = cluster;
  const unknown = unknownNames(Object.keys(obj), (k) => KNOWN_FILE_KEYS.has(k));
  if (unknown.length) record.unknownFields = unknown;
  return record;
}

/** Full check of a record: the key decodes strictly and the URN parses. */
export function decodeIdentity(record: IdentityRecord): DecodedIdentity {
  return { record, key: decodePrivateJwk(record.privateKey), urn: parseUrn(record.urn) };
}
