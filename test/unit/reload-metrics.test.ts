import { describe, expect, it } from 'vitest';
import { IdentityDecodeError, KubernetesError } from '../../src/errors.js';
import { eventToJson, type WatchEvent } from '../../src/reload/index.js';
import { ReloadMetrics } from '../../src/reload/reload-metrics.js';

const at = (s: number) => new Date(s * 1000);

function fed(events: WatchEvent[]): ReloadMetrics {
  const m = new ReloadMetrics({ namespace: 'datadog', secret: 'par-id' }, 1_000_000);
  for (const e of events) m.observe(e);
  return m;
}

const loaded = (reason: 'initial' | 'rotated', fingerprint: string, s: number): WatchEvent => ({
  type: 'loaded',
  at: at(s),
  reason,
  urn: `urn:dd:apps:on-prem-runner:us1:1:${fingerprint}`,
  fingerprint,
  changed: [],
  resourceVersion: '1',
  splayMs: 0,
});

describe('ReloadMetrics', () => {
  it('renders the Prometheus text exposition, counters from the events it saw', () => {
    const m = fed([
      { type: 'listed', at: at(1000), reason: 'start', found: true, resourceVersion: '5' },
      loaded('initial', 'fp-1', 1000),
      loaded('rotated', 'fp-2', 1100),
      { type: 'rejected', at: at(1200), resourceVersion: '7', error: new IdentityDecodeError('urn', 'bad') },
      { type: 'watch-error', at: at(1300), error: new KubernetesError('KUBE_UNREACHABLE', 'x', 'y'), attempt: 1, retryInMs: 1000 },
      { type: 'listed', at: at(1301), reason: 'expired', found: true, resourceVersion: '9' },
      { type: 'deleted', at: at(1302), resourceVersion: '10' },
      { type: 'watch-error', at: at(1303), error: new KubernetesError('WATCH_MALFORMED', 'x', 'y'), attempt: 1, retryInMs: 1000 },
      { type: 'ignored', at: at(1304), reason: 'another Secret' },
    ]);
    m.applyFailed();
    m.activity(1_400_500);
    const l = '{namespace="datadog",secret="par-id"}';
    expect(m.render(1_500_250)).toBe(
      [
        '# HELP par_reloads_total Identity changes applied after the first load.',
        '# TYPE par_reloads_total counter',
        `par_reloads_total${l} 1`,
        '# HELP par_reload_errors_total New Secret content that was not applied (invalid), or an identity that could not be handed on.',
        '# TYPE par_reload_errors_total counter',
        `par_reload_errors_total${l} 2`,
        '# HELP par_watch_restarts_total Restarts of the list+watch after an error (410 re-lists not included).',
        '# TYPE par_watch_restarts_total counter',
        `par_watch_restarts_total${l} 2`,
        '# HELP par_watch_malformed_events_total Watch streams ended because the API server sent a line that is not a valid event (not JSON, unknown type, another kind, missing fields).',
        '# TYPE par_watch_malformed_events_total counter',
        `par_watch_malformed_events_total${l} 1`,
        '# HELP par_watch_ignored_events_total Objects from the API server that were not this Secret (another name or namespace), not applied.',
        '# TYPE par_watch_ignored_events_total counter',
        `par_watch_ignored_events_total${l} 1`,
        '# HELP par_relists_total Full lists of the Secret (start, 410 Expired, periodic, restart).',
        '# TYPE par_relists_total counter',
        `par_relists_total${l} 2`,
        '# HELP par_identity_age_seconds Seconds since the current identity was put in service (loaded, and handed on when watch hands it on).',
        '# TYPE par_identity_age_seconds gauge',
        `par_identity_age_seconds${l} 400.250`,
        '# HELP par_last_event_timestamp_seconds Unix time of the last watch event (bookmarks included) or successful list.',
        '# TYPE par_last_event_timestamp_seconds gauge',
        `par_last_event_timestamp_seconds${l} 1400.500`,
        '# HELP par_identity_info The identity in service (loaded, and handed on when watch hands it on; never one that failed to be written): fingerprint is the RFC 7638 thumbprint of its public key.',
        '# TYPE par_identity_info gauge',
        'par_identity_info{namespace="datadog",secret="par-id",fingerprint="fp-2",urn="urn:dd:apps:on-prem-runner:us1:1:fp-2"} 1',
        '# HELP par_identity_ready 1 once an identity is in service.',
        '# TYPE par_identity_ready gauge',
        `par_identity_ready${l} 1`,
        '',
      ].join('\n'),
    );
  });

  it('leaves out samples it has no value for yet, and escapes label values', () => {
    const m = new ReloadMetrics({ namespace: 'a"b', secret: 'c\\d\ne' }, 0);
    const text = m.render(5000);
    expect(text).not.toMatch(/^par_identity_age_seconds/m);
    expect(text).not.toMatch(/^par_identity_info/m);
    expect(text).toContain('par_identity_ready{namespace="a\\"b",secret="c\\\\d\\ne"} 0\n');
  });

  it('is healthy while a watch event or list was heard within the threshold, counting from start', () => {
    const m = new ReloadMetrics({ namespace: 'n', secret: 's' }, 10_000);
    expect(m.health(15_000, 5_000)).toEqual({ ok: true, silentForMs: 5_000, heard: false });
    expect(m.health(15_001, 5_000)).toEqual({ ok: false, silentForMs: 5_001, heard: false });
    m.activity(15_000);
    expect(m.health(19_000, 5_000)).toEqual({ ok: true, silentForMs: 4_000, heard: true });
  });

  it('with a hand-over expected, shows as current only the identity handed on, never one that failed to be written', () => {
    const m = new ReloadMetrics({ namespace: 'n', secret: 's' }, 0);
    m.expectHandOn();
    m.observe(loaded('initial', 'fp-1', 1000));
    expect(m.render(2000)).not.toMatch(/^par_identity_info/m);
    expect(m.render(2000)).toMatch(/^par_identity_ready\{[^}]*\} 0$/m);
    m.applied('fp-1', 'urn:dd:apps:on-prem-runner:us1:1:fp-1', 1500);
    // The next one fails to be written: fp-1 stays the identity in service.
    m.observe(loaded('rotated', 'fp-2', 3000));
    m.applyFailed();
    const text = m.render(4000);
    expect(text).toContain('fingerprint="fp-1"');
    expect(text).not.toContain('fp-2');
    expect(text).toMatch(/^par_identity_age_seconds\{[^}]*\} 2\.500$/m);
    expect(m.acceptedFingerprint).toBe('fp-2');
  });
});

describe('eventToJson', () => {
  it('gives ISO times and errors as code/message/hint, without undefined fields', () => {
    const error = new IdentityDecodeError('private_key', 'has base64 padding');
    expect(eventToJson({ type: 'rejected', at: at(1), resourceVersion: '3', error })).toEqual({
      event: 'rejected',
      time: '1970-01-01T00:00:01.000Z',
      resourceVersion: '3',
      error: { code: 'IDENTITY_INVALID', message: 'private_key: has base64 padding', hint: error.hint },
    });
  });
});
