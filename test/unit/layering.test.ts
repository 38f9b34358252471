import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The layers of docs/architecture.md ("Layers"), read from the imports of every file of src/: an
// import points down or sideways, never up. Static `from '…'` and lazy `import('…')` alike: a lazy
// import is still a dependency. One kind of upward import is allowed: a command module's `import type`
// of the options type its definition derives (typeFromDefinition below). The emulators are their own
// bundle and are not checked here.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

/** Top first. A path not listed is core (identity, config, kube, rollout, storage, output, …). */
const LAYERS: { name: string; paths: string[] }[] = [
  { name: 'entry', paths: ['cli.ts', 'cli/', 'api.ts', 'api/'] },
  { name: 'commands', paths: ['commands/'] },
  // A command's own machinery beyond one file: watch's session, status's fleet views.
  { name: 'command modules', paths: ['watch/', 'status/'] },
  { name: 'session', paths: ['session/', 'agent/'] },
  { name: 'pipeline', paths: ['rotation/'] },
  { name: 'core', paths: [] },
];

/**
 * Imports that cross a layer upward on purpose, each with why. agent/reload-behaviour.ts is a pure
 * table of what an agent version does with a changed Secret (no imports): the cluster agent Secret
 * target reads it for its restart advice.
 */
const ALLOWED_UP = new Set(['rotation/targets/cluster-agent-secret.ts -> agent/reload-behaviour.ts']);

/**
 * A command module takes the options type its definition derives (src/cli/*-commands.ts: what its
 * toOptions builds from its flags): types flow down from the spec. Only as `import type`, which the
 * build erases, so no command chunk loads the command table; any other import of src/cli is upward.
 */
const typeFromDefinition = (e: Edge) => e.typeOnly && e.from.startsWith('commands/') && /^cli\/[a-z-]+-commands\.ts$/.test(e.to);

/** The imports that point up a layer, but the allowed ones. */
function upward(all: Edge[]): string[] {
  return all
    .filter((e) => layerOf(e.to) < layerOf(e.from) && !typeFromDefinition(e))
    .map((e) => `${e.from} -> ${e.to}`)
    .filter((e) => !ALLOWED_UP.has(e));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'emulators' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)'(\.{1,2}\/[^']+)'/gm;

interface Edge {
  from: string;
  to: string;
  /** `import type { … } from '…'`: erased by the build, no dependency at run time. */
  typeOnly: boolean;
}

/** Whether the `from '…'` at `at` ends an `import type … from` statement (the whole statement, not one name in it). */
function typeOnlyAt(text: string, at: number, match: string): boolean {
  if (!match.startsWith('from')) return false;
  const start = Math.max(text.lastIndexOf('\nimport ', at), text.lastIndexOf('\nexport ', at)) + 1;
  const statement = text.slice(start, at);
  return /^import\s+type\s/.test(statement) && !statement.includes(';');
}

/** Every relative import of src/ (but the emulators) as paths relative to src/, `.js` read as `.ts`. */
const edges: Edge[] = sourceFiles(SRC).flatMap((file) => {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(SPECIFIER)].map((m) => ({
    from: relative(SRC, file),
    to: relative(SRC, resolve(dirname(file), m[1]!)).replace(/\.js$/, '.ts'),
    typeOnly: typeOnlyAt(text, m.index, m[0]),
  }));
});

function layerOf(path: string): number {
  const at = LAYERS.findIndex((layer) => layer.paths.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p)));
  return at === -1 ? LAYERS.length - 1 : at;
}

const under = (prefixes: string[]) => (path: string) => prefixes.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p));

describe('layering of src/', () => {
  it('reads the imports (the parser finds the known ones)', () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(edges).toContainEqual({ from: 'commands/rotate-identity.ts', to: 'rotation/pipelines.ts', typeOnly: false });
    expect(edges).toContainEqual({ from: 'session/resolve-target.ts', to: 'rotation/targets/local-file.ts', typeOnly: false });
    expect(edges).toContainEqual({ from: 'commands/rotate-identity.ts', to: 'cli/rotation-commands.ts', typeOnly: true });
  });

  it('no import points up a layer (a command module takes its options type from its definition, as a type only)', () => {
    expect(upward(edges)).toEqual([]);
  });

  it('a value import of src/cli in a command module, or a type import of anything in src/cli but a definition, still points up', () => {
    const planted: Edge[] = [
      { from: 'commands/status.ts', to: 'cli/inspection-commands.ts', typeOnly: false },
      { from: 'commands/status.ts', to: 'cli/spec.ts', typeOnly: true },
      { from: 'commands/status.ts', to: 'cli/table.ts', typeOnly: true },
      { from: 'session/resolve-target.ts', to: 'cli/inspection-commands.ts', typeOnly: true },
    ];
    expect(upward(planted)).toEqual(planted.map((e) => `${e.from} -> ${e.to}`));
  });

  it('every allowed upward import still exists (the list shrinks, it does not rot)', () => {
    const present = new Set(edges.map((e) => `${e.from} -> ${e.to}`));
    expect([...ALLOWED_UP].filter((e) => !present.has(e))).toEqual([]);
  });

  it('src/rotation/ holds the pipeline only: watch, rollout, and the rollout, watch and credentials commands import nothing from it', () => {
    const outsiders = under(['watch/', 'rollout/', 'commands/rollout.ts', 'commands/watch.ts', 'commands/credentials.ts']);
    expect(edges.filter((e) => outsiders(e.from) && e.to.startsWith('rotation/')).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('the pipeline imports nothing of the session, the agent, the commands or the entries; the session nothing of the commands or entries', () => {
    const pipeline = edges.filter((e) => e.from.startsWith('rotation/'));
    const abovePipeline = under(['session/', 'agent/', 'commands/', 'watch/', 'status/', 'cli.ts', 'cli/', 'api.ts', 'api/']);
    expect(
      pipeline.filter((e) => abovePipeline(e.to) && !ALLOWED_UP.has(`${e.from} -> ${e.to}`)).map((e) => `${e.from} -> ${e.to}`),
    ).toEqual([]);
    const session = edges.filter((e) => e.from.startsWith('session/') || e.from.startsWith('agent/'));
    const aboveSession = under(['commands/', 'watch/', 'status/', 'cli.ts', 'cli/', 'api.ts', 'api/']);
    expect(session.filter((e) => aboveSession(e.to)).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });
});
