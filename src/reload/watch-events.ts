import type { ParError } from '../errors.js';
import { isoString } from '../time/index.js';

// What a watcher reports. Events carry URNs, fingerprints (RFC 7638 thumbprints) and
// resourceVersions only: never key material, so every consumer may log them as they are.

export type ChangedField = 'urn' | 'private_key';

/** Why the Secret was listed: first start, a 410 Expired watch, the periodic backstop, or a restart after an error. */
export type ListReason = 'start' | 'expired' | 'periodic' | 'restart';

export type WatchEvent =
  | {
      type: 'loaded';
      at: Date;
      /** `initial`: the first identity of this watcher; `rotated`: a change applied after it. */
      reason: 'initial' | 'rotated';
      urn: string;
      fingerprint: string;
      previousUrn?: string;
      previousFingerprint?: string;
      /** Empty for the initial load. */
      changed: ChangedField[];
      resourceVersion: string;
      /** Random delay waited before applying (0 without splay). */
      splayMs: number;
    }
  | { type: 'rejected'; at: Date; resourceVersion: string; error: ParError; keptFingerprint?: string }
  | { type: 'deleted'; at: Date; resourceVersion: string; keptFingerprint?: string }
  | { type: 'missing'; at: Date; keptFingerprint?: string }
  | { type: 'listed'; at: Date; reason: ListReason; found: boolean; resourceVersion: string }
  | { type: 'watch-error'; at: Date; error: ParError; attempt: number; retryInMs: number }
  /** Something that is not our Secret came from the API server (another name or namespace); it was not applied. */
  | { type: 'ignored'; at: Date; reason: string; keptFingerprint?: string };

/** JSON form of an event (the `--json` line of `par-identity watch`): dates as ISO strings, errors as code/message/hint. */
export function eventToJson(event: WatchEvent): Record<string, unknown> {
  const { at, type, ...rest } = event;
  const out: Record<string, unknown> = { event: type, time: isoString(at) };
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    const err = value as ParError;
    out[key] = key === 'error' ? { code: err.code, message: err.message, hint: err.hint } : value;
  }
  return out;
}
