// Rewrites the generated blocks of README.md (today: the exit-code tables) from the built CLI.
// Run after `npm run build`; test/unit/readme-sync.test.ts fails until README is in step.
import { readFile, writeFile } from 'node:fs/promises';

const { syncReadme } = await import('../dist/par-identity.js');
const url = new URL('../README.md', import.meta.url);
const before = await readFile(url, 'utf8');
const after = await syncReadme(before);
if (after !== before) await writeFile(url, after);
console.log(after === before ? 'README.md already in step' : 'README.md updated');
