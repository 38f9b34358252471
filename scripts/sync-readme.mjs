// Rewrites the generated blocks of the Markdown docs from the built CLI: README.md's brief exit-code
// table and docs/output.md's full one. Run after `npm run build`; test/unit/readme-sync.test.ts fails
// until both are in step.
import { readFile, writeFile } from 'node:fs/promises';

const { syncReadme } = await import('../dist/par-identity.js');
for (const doc of ['../README.md', '../docs/output.md']) {
  const url = new URL(doc, import.meta.url);
  const before = await readFile(url, 'utf8');
  const after = await syncReadme(before);
  if (after !== before) await writeFile(url, after);
  console.log(after === before ? `${doc.slice(3)} already in step` : `${doc.slice(3)} updated`);
}
