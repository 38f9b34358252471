import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines } from '../../src/reload/strict-watch.js';

// The watch stream's line splitting: readline's (crlfDelay: Infinity), without loading readline.

function linesOf(chunks: string[]): Promise<string[]> {
  const stream = new PassThrough();
  const lines: string[] = [];
  const done = new Promise<string[]>((resolve) =>
    readLines(
      stream,
      (l) => lines.push(l),
      () => resolve(lines),
    ),
  );
  for (const c of chunks) stream.write(c);
  stream.end();
  return done;
}

describe('readLines', () => {
  it.each([
    [['a\nb\n'], ['a', 'b']],
    [['a\r\nb\r\n'], ['a', 'b']],
    [
      ['a\r', '\nb\n'],
      ['a', 'b'],
    ],
    [['a\rb\n'], ['a', 'b']],
    [
      ['a\r', 'b'],
      ['a', 'b'],
    ],
    [
      ['{"type":', '"ADDED"}\n{"x"', ':1}'],
      ['{"type":"ADDED"}', '{"x":1}'],
    ],
    [['\n\n'], ['', '']],
    [['no newline at the end'], ['no newline at the end']],
    [[], []],
  ])('%j → %j, as readline', async (chunks, expected) => {
    expect(await linesOf(chunks)).toEqual(expected);
  });

  it('splits a multi-byte character across chunks correctly', async () => {
    const bytes = Buffer.from('é\n', 'utf8');
    const stream = new PassThrough();
    const lines: string[] = [];
    const done = new Promise<void>((resolve) => readLines(stream, (l) => lines.push(l), resolve));
    stream.write(bytes.subarray(0, 1));
    stream.end(bytes.subarray(1));
    await done;
    expect(lines).toEqual(['é']);
  });
});
