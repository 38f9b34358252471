import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Everything a reader needs is in the repository: a comment that cites a document cites one of docs/,
// and a section (`docs/protocol.md §4b`) that the document has as a heading (`## 4b. …`). Nothing
// points at a document outside the repository.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCANNED = ['src', 'test', 'scripts', 'bin', 'README.md', 'docs'];

function files(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full).flatMap((name) =>
    name === 'node_modules' || name === '__snapshots__' || name === 'control-plane' ? [] : files(join(path, name)),
  );
}

const sources = SCANNED.flatMap(files)
  .filter((f) => /\.(ts|mjs|js|cjs|sh|md)$/.test(f))
  .map((f) => ({ file: relative(ROOT, join(ROOT, f)), text: readFileSync(join(ROOT, f), 'utf8') }));

/** `## 4b. Asking …` → `4b`, for each document of docs/. */
function sectionsOf(doc: string): Set<string> {
  const text = readFileSync(join(ROOT, 'docs', doc), 'utf8');
  return new Set([...text.matchAll(/^#{2,3} (\d+[a-z]?)\. /gm)].map((m) => m[1]!));
}

// `docs/protocol.md §3`, `docs/protocol.md §4 step 7`; a citation names one document and one section.
const CITATION = /docs\/([\w-]+\.md)(?: §(\d+[a-z]?))?/g;

describe('citations of documents', () => {
  const citations = sources.flatMap(({ file, text }) => [...text.matchAll(CITATION)].map((m) => ({ file, doc: m[1]!, section: m[2] })));

  it('the sources cite docs/ (the protocol facts, the rollout facts) by section', () => {
    expect(citations.filter((c) => c.doc === 'protocol.md' && c.section).length).toBeGreaterThan(40);
    expect(citations.filter((c) => c.doc === 'rollout.md' && c.section).length).toBeGreaterThan(3);
  });

  it('every cited document exists and has the cited section', () => {
    const docs = new Set(readdirSync(join(ROOT, 'docs')));
    const wrong = citations.filter((c) => !docs.has(c.doc) || (c.section !== undefined && !sectionsOf(c.doc).has(c.section)));
    expect(wrong.map((c) => `${c.file}: docs/${c.doc} §${c.section}`)).toEqual([]);
  });

  it('nothing cites a document outside the repository, or a section without its document', () => {
    const outside = sources.flatMap(({ file, text }) =>
      text
        .split('\n')
        .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
        // A bare `§N` (not after `docs/<file>.md`) or `protocol §N` leaves the reader to guess the document.
        .filter(({ line }) => /shared\/docs|(?<!docs\/[\w-]+\.md )§\d/.test(line.replace(/RFC \d+ §[\d.]+|issue \d+ §\d+/g, '')))
        .map(({ at }) => at),
    );
    expect(outside.filter((at) => !at.startsWith('test/unit/doc-citations.test.ts') && !at.startsWith('docs/'))).toEqual([]);
  });

  it('inside a document of docs/, a bare §N names a section of that document', () => {
    const wrong = sources
      .filter(({ file }) => file.startsWith('docs/'))
      .flatMap(({ file, text }) => {
        const own = sectionsOf(file.slice('docs/'.length));
        return [...text.replace(CITATION, '').matchAll(/§(\d+[a-z]?)/g)].filter((m) => !own.has(m[1]!)).map((m) => `${file}: §${m[1]}`);
      });
    expect(wrong).toEqual([]);
  });
});
