import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `npm run test:install`: which Node the npm scripts run on (scripts/node.sh). With a Node older than
// 24 first on PATH (and the npm that comes with it), `npm test`, `npm run demo` and the build run on
// the pinned `node` devDependency; with a supported Node first on PATH, that one. Checked through
// `npm run which-node`, which goes through the same scripts/node.sh as every other script.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The old Node of the machine: PAR_IDENTITY_OLD_NODE_DIR, else /usr/bin when its node is older than 24. */
const oldNodeDir = process.env.PAR_IDENTITY_OLD_NODE_DIR ?? '/usr/bin';
const oldMajor = existsSync(join(oldNodeDir, 'node'))
  ? Number(spawnSync(join(oldNodeDir, 'node'), ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim())
  : Number.NaN;
const haveOldNode = oldMajor < 24 && existsSync(join(oldNodeDir, 'npm'));

function whichNode(pathFirst: string): { version: string; execPath: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${pathFirst}:${process.env.PATH ?? ''}` };
  // What npm itself set for a parent npm script must not leak into this one.
  for (const k of Object.keys(env)) if (k.startsWith('npm_') || k === 'PAR_IDENTITY_NODE') delete env[k];
  const run = spawnSync('npm', ['run', '--silent', 'which-node'], { cwd: ROOT, env, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  const [version, execPath] = run.stdout.trim().split('\n').at(-1)!.split(' ') as [string, string];
  return { version, execPath };
}

describe('the Node the npm scripts run on', () => {
  it('every script that runs JavaScript goes through scripts/node.sh', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const name of ['build', 'test', 'demo', 'bench', 'prepack', 'test:install', 'which-node']) {
      for (const part of scripts[name]!.split('&&'))
        expect(part.trim(), `${name}: ${part}`).toMatch(/^(?:[A-Z_]+=\S+ )*scripts\/node\.sh |^scripts\/[\w-]+\.sh\b|^biome /);
    }
  });

  it('a supported Node first on PATH is the one used', () => {
    const { version, execPath } = whichNode(dirname(process.execPath));
    expect(version).toBe(process.version);
    expect(realpathSync(execPath)).toBe(realpathSync(process.execPath));
  });

  it.skipIf(!haveOldNode)(`with the machine's Node ${oldMajor} first on PATH, the pinned Node (24 or newer) is used`, () => {
    const { version, execPath } = whichNode(oldNodeDir);
    expect(Number(/^v(\d+)\./.exec(version)?.[1])).toBeGreaterThanOrEqual(24);
    expect(realpathSync(execPath)).toBe(realpathSync(join(ROOT, 'node_modules', 'node', 'bin', 'node')));
  });
});
