import { describe, expect, it } from 'vitest';
import { kubectlDryRun } from '../../src/cli/main.js';
import { UsageError } from '../../src/errors.js';

describe("kubectl's --dry-run forms become ours before commander parses", () => {
  it.each<[string[], string[]]>([
    [
      ['rotate-identity', '--dry-run=server'],
      ['rotate-identity', '--dry-run'],
    ],
    [
      ['rotate-identity', '--dry-run=client', '--json'],
      ['rotate-identity', '--dry-run', '--json'],
    ],
    [['rollback', '--dry-run=none'], ['rollback']],
    [
      ['rollback', '--dry-run'],
      ['rollback', '--dry-run'],
    ],
  ])('%j → %j', (given, expected) => {
    expect(kubectlDryRun(given)).toEqual(expected);
  });

  it('any other value is a usage error naming the forms', () => {
    expect(() => kubectlDryRun(['rotate-identity', '--dry-run=bogus'])).toThrow(UsageError);
    expect(() => kubectlDryRun(['rotate-identity', '--dry-run='])).toThrow(/kubectl's forms/);
  });
});
