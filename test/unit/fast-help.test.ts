import { describe, expect, it } from 'vitest';
import { type HelpVariant, storedAnswer } from '../../src/cli/fast-help.js';

// The one rule both launchers answer a help request by without loading the product (src/cli/fast-help.ts).
// Under vitest stdout is no terminal, so the width is commander's 80.
const texts = {
  VERSION: '1.2.3\n',
  HELP: {
    '': [[80, 80, 'program help at 80\n'] as HelpVariant, [81, 400, 'program help, wide\n'] as HelpVariant],
    status: [[60, 120, 'status help\n'] as HelpVariant],
    narrow: [[20, 40, 'only narrow\n'] as HelpVariant],
  },
};
const env = {};

describe('storedAnswer', () => {
  it('answers every form of a pure help request from the stored text at the width commander would use', () => {
    for (const args of [[], ['--help'], ['-h'], ['help']]) expect(storedAnswer(args, texts, env)).toBe('program help at 80\n');
    for (const args of [
      ['status', '--help'],
      ['status', '-h'],
      ['help', 'status'],
    ])
      expect(storedAnswer(args, texts, env)).toBe('status help\n');
    for (const args of [['--version'], ['-V']]) expect(storedAnswer(args, texts, env)).toBe('1.2.3\n');
  });

  it('leaves to the full path anything else: extra words, unknown commands, other widths, no help word', () => {
    for (const args of [
      ['status'],
      ['status', '--help', '--json'],
      ['--json', '--help'],
      ['nope', '--help'],
      ['help', 'nope'],
      ['help', 'help'],
      ['narrow', '--help'],
      ['--version', '--json'],
      ['status', '--verbose'],
    ]) {
      expect(storedAnswer(args, texts, env), args.join(' ')).toBeUndefined();
    }
  });

  it('PAR_IDENTITY_NO_FAST_HELP always takes the full path', () => {
    expect(storedAnswer(['--help'], texts, { PAR_IDENTITY_NO_FAST_HELP: '1' })).toBeUndefined();
    expect(storedAnswer(['--version'], texts, { PAR_IDENTITY_NO_FAST_HELP: '1' })).toBeUndefined();
  });

  it('never answers from a property that is not a stored command (prototype names)', () => {
    expect(storedAnswer(['constructor', '--help'], texts, env)).toBeUndefined();
    expect(storedAnswer(['help', '__proto__'], texts, env)).toBeUndefined();
  });
});
