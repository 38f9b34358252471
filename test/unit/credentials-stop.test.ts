import { describe, expect, it } from 'vitest';
import { run } from '../../src/commands/credentials.js';
import { InterruptedError } from '../../src/errors.js';
import type { Io } from '../../src/io.js';

// `credentials` stopped by SIGINT/SIGTERM (src/cli/stop-signals.ts aborts its signal): it stores or
// deletes nothing after the stop, and says so; stopped before it starts, it never reaches the keychain.

function stoppedBy(name: 'SIGINT' | 'SIGTERM'): AbortSignal {
  const controller = new AbortController();
  controller.abort(Object.assign(new Error(`stopped by ${name}`), { name: 'AbortError', stopSignal: name }));
  return controller.signal;
}

function io(stdin: string, reads: { n: number }): Io {
  return {
    stdout: () => undefined,
    stderr: () => undefined,
    env: {},
    now: () => new Date(0),
    isTTY: false,
    stdinIsTTY: false,
    readStdin: async (signal) => {
      reads.n++;
      if (signal?.aborted) throw new InterruptedError('standard input');
      return stdin;
    },
    promptHidden: async () => '',
  };
}

// The options the command's definition builds (src/cli/tool-commands.ts): -c given or not included.
const base = { profile: 'p', cfgPath: '/nonexistent', extraCfg: [], cfgPathGiven: true, json: false, color: false };

describe('credentials stopped by a signal', () => {
  it('set: stopped while reading the keys → INTERRUPTED (143 for SIGTERM), nothing stored', async () => {
    const reads = { n: 0 };
    const err = await run({ ...base, action: 'set', signal: stoppedBy('SIGTERM') }, io('k\n', reads)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InterruptedError);
    expect(err).toMatchObject({
      code: 'INTERRUPTED',
      exitCode: 143,
      message: 'stopped by SIGTERM while the keys were read, before anything was stored: keychain profile p unchanged',
    });
    expect((err as InterruptedError).hint).toBe('Nothing to undo. Run `par-identity credentials set --profile p` again when you want.');
    expect(reads.n).toBe(1);
  });

  it('delete: stopped before it starts → nothing deleted (exit 130)', async () => {
    const err = await run({ ...base, action: 'delete', profile: 'default', signal: stoppedBy('SIGINT') }, io('', { n: 0 })).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: 'INTERRUPTED',
      exitCode: 130,
      message: 'stopped by SIGINT before anything was deleted: keychain profile default unchanged',
    });
    expect((err as InterruptedError).hint).toBe('Nothing to undo. Run `par-identity credentials delete` again when you want.');
  });

  it('show: stopped while reading → INTERRUPTED, nothing to undo', async () => {
    const err = await run({ ...base, action: 'show', signal: stoppedBy('SIGINT') }, io('', { n: 0 })).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'INTERRUPTED',
      message: 'stopped by SIGINT while reading: keychain profile p unchanged',
      hint: 'Nothing to undo (show only reads).',
    });
  });
});
