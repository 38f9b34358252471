import { describe, expect, it } from 'vitest';
import { agentVersionOfImage, RELOAD_TABLE, type ReloadRule, reloadBehaviour } from '../../src/agent/reload-behaviour.js';

// The version table of docs/protocol.md §6d: what a running cluster agent does with a changed identity
// Secret, which decides whether par-identity asks for a restart.

describe('reloadBehaviour', () => {
  it.each([
    ['7.77.0', 'none'],
    ['7.80.9', 'none'],
    ['7.81.0', 'none'],
    ['7.81.1', 'none'],
    ['7.81.1-rc.2', 'none'],
    ['7.81.1+commit.abc1234', 'none'],
    ['7.81.1-fips', 'none'],
    ['v7.81.0', 'none'],
  ])('%s reads the Secret only at start: %s', (version, reloads) => {
    expect(reloadBehaviour(version).reloads).toBe(reloads);
  });

  it('cites the agent change each "none" rests on', () => {
    expect(reloadBehaviour('7.81.1').why).toContain('#52031');
    expect(reloadBehaviour('7.50.0').why).toContain('7.81.0');
  });

  it.each([['7.82.0'], ['8.0.0'], ['7.100.0']])('a version newer than those read (%s) is unknown, never a promised reload', (version) => {
    const b = reloadBehaviour(version);
    expect(b.reloads).toBe('unknown');
    expect(b.why).toContain('newer than the versions read');
    expect(b.why).toMatch(/may reload .* or only read it at start/);
  });

  it.each([[undefined], [''], ['latest'], ['7'], ['7.81'], ['sha256:abcd'], ['7.81.x']])(
    'no release number (%s) is unknown, saying both possibilities',
    (version) => {
      const b = reloadBehaviour(version);
      expect(b.reloads).toBe('unknown');
      expect(b.why).toMatch(/may reload .* or only read it at start/);
    },
  );

  it('a version from a cluster object is shown bounded and printable', () => {
    const b = reloadBehaviour(`x\u001b[31m${'y'.repeat(200)}`);
    expect(b.why).not.toContain('\u001b');
    expect(b.why.length).toBeLessThan(300);
  });

  it('follows the table it is given: a urn-change range, its bounds half-open', () => {
    const table: ReloadRule[] = [...RELOAD_TABLE, { from: '7.90.0', below: '7.91.0', reloads: 'urn-change', why: 'test range' }];
    expect(reloadBehaviour('7.90.0', table)).toEqual({ reloads: 'urn-change', why: 'test range' });
    expect(reloadBehaviour('7.90.7', table).reloads).toBe('urn-change');
    expect(reloadBehaviour('7.91.0', table).reloads).toBe('unknown');
    expect(reloadBehaviour('7.89.0', table).reloads).toBe('unknown');
    const open: ReloadRule[] = [{ from: '9.0.0', reloads: 'urn-change', why: 'open' }];
    expect(reloadBehaviour('12.3.4', open).reloads).toBe('urn-change');
  });

  it('the shipped table has no gap and no overlap up to its last version', () => {
    for (let i = 1; i < RELOAD_TABLE.length; i++) expect(RELOAD_TABLE[i]!.from).toBe(RELOAD_TABLE[i - 1]!.below);
    expect(RELOAD_TABLE[0]!.from).toBe('0.0.0');
  });
});

describe('agentVersionOfImage', () => {
  it.each([
    ['gcr.io/datadoghq/cluster-agent:7.81.1', '7.81.1'],
    ['registry.local:5000/datadog/cluster-agent:7.81.1-fips', '7.81.1-fips'],
    ['cluster-agent:7.81.1@sha256:0123', '7.81.1'],
    ['datadog/cluster-agent:latest', 'latest'],
    ['registry.local:5000/datadog/cluster-agent', undefined],
    ['datadog/cluster-agent@sha256:0123', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%s -> %s', (image, version) => {
    expect(agentVersionOfImage(image)).toBe(version);
  });
});
