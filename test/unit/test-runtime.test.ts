import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The Node this very test run is on (scripts/node.sh chose it for `npm test`). CI says for each of its
// runs which one it expects (PAR_IDENTITY_TEST_EXPECT_NODE: the Node 24 or 26 it put first on PATH, or,
// with the machine's Node 20 first, the pinned devDependency), so a run that fell back to another Node,
// or never left the old one, fails here instead of passing on the wrong runtime. Under npm, whoever runs
// it, scripts/node.sh's rule holds: npm's own Node when it is 24 or newer, else the pinned one.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PINNED = join(ROOT, 'node_modules', 'node', 'bin', 'node');
const pinnedVersion = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> })
  .devDependencies.node;
const expected = process.env.PAR_IDENTITY_TEST_EXPECT_NODE;
/** npm's user agent names the Node npm runs on: "npm/10.8.2 node/v20.20.2 linux x64 …". */
const npmNodeMajor = Number(/ node\/v(\d+)\./.exec(process.env.npm_config_user_agent ?? '')?.[1] ?? Number.NaN);

describe('the Node the tests run on', () => {
  it.skipIf(expected === undefined)('is the one CI expects for this run (PAR_IDENTITY_TEST_EXPECT_NODE)', () => {
    expect(realpathSync(process.execPath)).toBe(realpathSync(expected!));
    if (realpathSync(expected!) === realpathSync(PINNED)) expect(process.version).toBe(`v${pinnedVersion}`);
  });

  it.skipIf(Number.isNaN(npmNodeMajor))(
    "under npm, follows scripts/node.sh: npm's Node when 24 or newer, else the pinned devDependency",
    () => {
      if (npmNodeMajor >= 24) expect(realpathSync(process.execPath)).toBe(realpathSync(process.env.npm_node_execpath!));
      else {
        expect(realpathSync(process.execPath)).toBe(realpathSync(PINNED));
        expect(process.version).toBe(`v${pinnedVersion}`);
      }
    },
  );
});
