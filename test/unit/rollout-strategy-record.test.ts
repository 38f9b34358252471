import type { V1DaemonSet, V1Deployment } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  assessLeftover,
  newRecord,
  ORIGINAL_STRATEGY_ANNOTATION,
  readRecord,
  type StrategyRecord,
  sameStrategy,
  strategyOf,
} from '../../src/rollout/strategy-record.js';

// The strategy record a rollout leaves on its workload while it has the strategy changed, and what a
// later run makes of it: in progress (never touched), interrupted (restored), changed since (left).

const NOW = new Date('2026-12-07T01:00:00Z');
const ORIGINAL = { type: 'RollingUpdate', maxSurge: '25%', maxUnavailable: '25%' };
const SURGE = { type: 'RollingUpdate', maxSurge: '25%', maxUnavailable: 0 };

function record(over: Partial<StrategyRecord> = {}): StrategyRecord {
  return {
    v: 1,
    kind: 'deployment',
    original: ORIGINAL,
    changed: SURGE,
    at: '2026-12-07T00:58:00Z',
    host: 'node-a',
    pid: 4242,
    until: '2026-12-07T01:10:00Z',
    ...over,
  };
}

function deployment(strategy: { maxSurge: number | string; maxUnavailable: number | string }, annotation?: string): V1Deployment {
  return {
    metadata: {
      name: 'par',
      namespace: 'datadog',
      resourceVersion: '7',
      ...(annotation !== undefined ? { annotations: { [ORIGINAL_STRATEGY_ANNOTATION]: annotation } } : {}),
    },
    spec: { selector: {}, template: {}, strategy: { type: 'RollingUpdate', rollingUpdate: strategy } },
  };
}

const alive = () => undefined;
const gone = () => 'pid 4242 is gone';

describe('the strategy record on a workload', () => {
  it('none: nothing to report', () => {
    expect(
      assessLeftover('deployment', deployment({ maxSurge: '25%', maxUnavailable: '25%' }), { now: NOW, host: 'node-a', gone }),
    ).toEqual({ state: 'none' });
  });

  it('its process gone (same host) and the strategy as it set it: interrupted, restorable, worded for the operator', () => {
    const l = assessLeftover('deployment', deployment({ maxSurge: '25%', maxUnavailable: 0 }, JSON.stringify(record())), {
      now: NOW,
      host: 'node-a',
      gone,
    });
    expect(l.state).toBe('interrupted');
    if (l.state !== 'interrupted') return;
    expect(l.record.original).toEqual(ORIGINAL);
    expect(l.message).toBe(
      'strategy changed by an interrupted par-identity rollout at 2026-12-07T00:58:00Z (original: maxSurge 25%, maxUnavailable 25%; now: maxSurge 25%, maxUnavailable 0; pid 4242 is gone)',
    );
  });

  it('its process still running, or another host before the deadline: in progress, never restored', () => {
    const w = deployment({ maxSurge: '25%', maxUnavailable: 0 }, JSON.stringify(record()));
    expect(assessLeftover('deployment', w, { now: NOW, host: 'node-a', gone: alive }).state).toBe('in-progress');
    // Another host: its pid cannot be checked from here; the deadline decides.
    expect(assessLeftover('deployment', w, { now: NOW, host: 'node-b' }).state).toBe('in-progress');
    const l = assessLeftover('deployment', w, { now: new Date('2026-12-07T01:10:01Z'), host: 'node-b' });
    expect(l.state).toBe('interrupted');
    if (l.state === 'interrupted') expect(l.why).toBe('its deadline passed at 2026-12-07T01:10:00Z');
  });

  it('the strategy changed by hand since: changed-since, their value named, never restored', () => {
    const l = assessLeftover('deployment', deployment({ maxSurge: 3, maxUnavailable: 1 }, JSON.stringify(record())), {
      now: NOW,
      host: 'node-a',
      gone,
    });
    expect(l.state).toBe('changed-since');
    if (l.state === 'changed-since') {
      expect(l.current).toEqual({ type: 'RollingUpdate', maxSurge: 3, maxUnavailable: 1 });
      expect(l.message).toMatch(/changed since by someone else \(now: maxSurge 3, maxUnavailable 1\): left as it is/);
    }
  });

  it('int and string forms of the same value are the same strategy; the type counts', () => {
    expect(sameStrategy({ type: 'RollingUpdate', maxSurge: 1, maxUnavailable: 0 }, { type: null, maxSurge: '1', maxUnavailable: 0 })).toBe(
      true,
    );
    expect(
      sameStrategy({ type: 'RollingUpdate', maxSurge: 1, maxUnavailable: 0 }, { type: 'RollingUpdate', maxSurge: 1, maxUnavailable: '0%' }),
    ).toBe(false);
    expect(
      sameStrategy(
        { type: 'Recreate', maxSurge: null, maxUnavailable: null },
        { type: 'RollingUpdate', maxSurge: null, maxUnavailable: null },
      ),
    ).toBe(false);
  });

  it('a value not of the form written here is unreadable: reported, never acted on, its text never echoed', () => {
    const hostile = [
      'not json',
      JSON.stringify({ ...record(), host: 'evil\u001b[2J' }),
      JSON.stringify({ ...record(), original: { type: 'RollingUpdate', maxSurge: '25%; rm -rf', maxUnavailable: 1 } }),
      JSON.stringify({ ...record(), kind: 'daemonset' }),
      JSON.stringify({ ...record(), v: 2 }),
      JSON.stringify({ ...record(), pid: -1 }),
      JSON.stringify({ ...record(), at: 'yesterday' }),
      'x'.repeat(5000),
    ];
    for (const raw of hostile) {
      const l = assessLeftover('deployment', deployment({ maxSurge: '25%', maxUnavailable: 0 }, raw), { now: NOW, host: 'node-a', gone });
      expect(l.state, raw.slice(0, 60)).toBe('unreadable');
      if (l.state === 'unreadable') expect(l.message).not.toContain(raw.slice(0, 20));
    }
  });

  it('a record written by newRecord reads back as itself; a DaemonSet reads its updateStrategy', () => {
    const ds: V1DaemonSet = {
      metadata: { name: 'par' },
      spec: { selector: {}, template: {}, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } } },
    };
    const original = strategyOf('daemonset', ds);
    expect(original).toEqual({ type: 'RollingUpdate', maxSurge: 0, maxUnavailable: 1 });
    const r = newRecord('daemonset', original, { type: 'RollingUpdate', maxSurge: 1, maxUnavailable: 0 }, NOW, NOW.getTime() + 300_000);
    expect(r).toMatchObject({ v: 1, kind: 'daemonset', at: '2026-12-07T01:00:00Z', pid: process.pid, until: '2026-12-07T01:06:00Z' });
    ds.metadata!.annotations = { [ORIGINAL_STRATEGY_ANNOTATION]: JSON.stringify(r) };
    expect(readRecord('daemonset', ds)).toEqual(r);
    // This very process holds it: in progress, never restored by itself through the leftover path.
    expect(assessLeftover('daemonset', ds, { now: NOW }).state).toBe('in-progress');
  });
});
