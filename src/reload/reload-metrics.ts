import type { WatchEvent } from './watch-events.js';

// Counters and gauges of one watcher, in the Prometheus text exposition format (version 0.0.4).
// Fed from the watcher's own events, so what is counted is exactly what is reported.

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

interface MetricsLabels {
  namespace: string;
  secret: string;
}

export class ReloadMetrics {
  reloads = 0;
  reloadErrors = 0;
  watchRestarts = 0;
  /** Watch streams ended because the API server sent something malformed (included in watchRestarts). */
  malformedEvents = 0;
  /** Objects from the API server that were not our Secret, ignored. */
  ignoredEvents = 0;
  relists = 0;
  /** Epoch ms of the last watch event (bookmarks included) or successful list. */
  lastActivityMs: number | undefined;
  /** Epoch ms when the current identity was put in service. */
  loadedAtMs: number | undefined;
  /** The identity in service: loaded, and handed on when a hand-over is expected (handOnExpected). */
  fingerprint: string | undefined;
  urn: string | undefined;
  /** The last identity the watch decoded and accepted, handed on or not. */
  acceptedFingerprint: string | undefined;
  /**
   * Set by a caller that hands identities on (watch's file, signal, command): then only an identity
   * whose hand-over succeeded (applied()) is shown as current, never one that failed to be written.
   */
  private handOnExpected = false;

  constructor(
    readonly labels: MetricsLabels,
    readonly startedAtMs: number,
  ) {}

  observe(event: WatchEvent): void {
    const ms = event.at.getTime();
    switch (event.type) {
      case 'loaded':
        if (event.reason === 'rotated') this.reloads++;
        this.acceptedFingerprint = event.fingerprint;
        if (!this.handOnExpected) this.inService(event.fingerprint, event.urn, ms);
        break;
      case 'rejected':
        this.reloadErrors++;
        break;
      case 'watch-error':
        this.watchRestarts++;
        if (event.error.code === 'WATCH_MALFORMED') this.malformedEvents++;
        break;
      case 'ignored':
        this.ignoredEvents++;
        break;
      case 'listed':
        this.relists++;
        this.activity(ms);
        break;
      default:
        break;
    }
  }

  /** From now on an identity counts as current only once applied() says it was handed on. */
  expectHandOn(): void {
    this.handOnExpected = true;
  }

  /** The identity was handed on (written, signalled, given to the command): it is the one in service. */
  applied(fingerprint: string, urn: string, ms: number): void {
    this.inService(fingerprint, urn, ms);
  }

  private inService(fingerprint: string, urn: string, ms: number): void {
    this.loadedAtMs = ms;
    this.fingerprint = fingerprint;
    this.urn = urn;
  }

  activity(ms: number): void {
    this.lastActivityMs = ms;
  }

  /** A failure to hand a loaded identity on (file, signal, child) counts as a reload error too. */
  applyFailed(): void {
    this.reloadErrors++;
  }

  /**
   * Alive when the watch or a list was heard from within `staleMs` (counting from start until the
   * first). `heard` says whether anything was heard at all, so no one reports a list that never was.
   */
  health(nowMs: number, staleMs: number): { ok: boolean; silentForMs: number; heard: boolean } {
    const silentForMs = nowMs - (this.lastActivityMs ?? this.startedAtMs);
    return { ok: silentForMs <= staleMs, silentForMs, heard: this.lastActivityMs !== undefined };
  }

  render(nowMs: number): string {
    const out: string[] = [];
    const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: Array<[Record<string, string>, number]>) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) out.push(`${name}${renderLabels(labels)} ${formatValue(value)}`);
    };
    const base = { namespace: this.labels.namespace, secret: this.labels.secret };
    metric('par_reloads_total', 'counter', 'Identity changes applied after the first load.', [[base, this.reloads]]);
    metric(
      'par_reload_errors_total',
      'counter',
      'New Secret content that was not applied (invalid), or an identity that could not be handed on.',
      [[base, this.reloadErrors]],
    );
    metric('par_watch_restarts_total', 'counter', 'Restarts of the list+watch after an error (410 re-lists not included).', [
      [base, this.watchRestarts],
    ]);
    metric(
      'par_watch_malformed_events_total',
      'counter',
      'Watch streams ended because the API server sent a line that is not a valid event (not JSON, unknown type, another kind, missing fields).',
      [[base, this.malformedEvents]],
    );
    metric(
      'par_watch_ignored_events_total',
      'counter',
      'Objects from the API server that were not this Secret (another name or namespace), not applied.',
      [[base, this.ignoredEvents]],
    );
    metric('par_relists_total', 'counter', 'Full lists of the Secret (start, 410 Expired, periodic, restart).', [[base, this.relists]]);
    metric(
      'par_identity_age_seconds',
      'gauge',
      'Seconds since the current identity was put in service (loaded, and handed on when watch hands it on).',
      this.loadedAtMs === undefined ? [] : [[base, (nowMs - this.loadedAtMs) / 1000]],
    );
    metric(
      'par_last_event_timestamp_seconds',
      'gauge',
      'Unix time of the last watch event (bookmarks included) or successful list.',
      this.lastActivityMs === undefined ? [] : [[base, this.lastActivityMs / 1000]],
    );
    metric(
      'par_identity_info',
      'gauge',
      'The identity in service (loaded, and handed on when watch hands it on; never one that failed to be written): ' +
        'fingerprint is the RFC 7638 thumbprint of its public key.',
      this.fingerprint === undefined ? [] : [[{ ...base, fingerprint: this.fingerprint, urn: this.urn ?? '' }, 1]],
    );
    metric('par_identity_ready', 'gauge', '1 once an identity is in service.', [[base, this.fingerprint === undefined ? 0 : 1]]);
    return `${out.join('\n')}\n`;
  }
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function renderLabels(labels: Record<string, string>): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

function formatValue(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(3);
}
