import type { Envelope } from './envelope.js';

/** What a watch reports when it stops: the Secret it followed, the last identity, its counters. */
export interface WatchCounters {
  secret: { namespace: string; name: string };
  urn?: string;
  fingerprint?: string;
  reloads: number;
  reloadErrors: number;
  watchRestarts: number;
}

/** The last object of `watch --json`, after its event lines. */
export type WatchResult = Envelope<'watch', 'ok'> &
  WatchCounters & {
    /** The stop signal, or `child-exit` when the supervised command ended first. */
    stoppedBy: string;
    childExitStatus?: number;
  };
