import { describe, expect, it } from 'vitest';
import { reloadBehaviour, type ReloadRule } from '../../src/agent/reload-behaviour.js';
import { podIdentity } from '../../src/status/fleet-view.js';

// status --pods: which identity a Pod runs, by the fingerprint it started with and what its agent
// version does with a changed Secret (docs/protocol.md §6d).

const reloads: ReloadRule[] = [{ from: '7.90.0', reloads: 'urn-change', why: 'test: reloads on urn change' }];

describe('podIdentity', () => {
  it('a Pod that started with the identity in service runs it, whatever its version', () => {
    for (const v of ['7.81.1', 'latest', undefined]) expect(podIdentity('fp-new', 'fp-new', reloadBehaviour(v)).identity).toBe('current');
  });

  it('a Pod whose agent reloads on a urn change runs the current identity, never another one', () => {
    const p = podIdentity('fp-old', 'fp-new', reloadBehaviour('7.90.1', reloads));
    expect(p).toEqual({ identity: 'current', how: 'reloaded: test: reloads on urn change' });
    expect(podIdentity(null, 'fp-new', reloadBehaviour('7.90.1', reloads)).identity).toBe('current');
  });

  it('a Pod whose agent reads at start only and started with another identity runs the previous one', () => {
    const p = podIdentity('fp-old', 'fp-new', reloadBehaviour('7.81.1'));
    expect(p.identity).toBe('previous');
    expect(p.how).toContain('#52031');
  });

  it('a Pod of unknown version may have reloaded: unknown, not previous', () => {
    expect(podIdentity('fp-old', 'fp-new', reloadBehaviour('latest')).identity).toBe('unknown');
    expect(podIdentity(null, 'fp-new', reloadBehaviour('7.82.0')).identity).toBe('unknown');
  });

  it('with no identity in service nothing is current', () => {
    expect(podIdentity('fp', null, reloadBehaviour('7.90.1', reloads)).identity).toBe('unknown');
    expect(podIdentity('fp', null, reloadBehaviour('7.81.1')).identity).toBe('previous');
  });
});
