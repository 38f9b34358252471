// Lists exports of src/ and emulators/ that no other file imports (src/, emulators/, test/, scripts/), with the TypeScript
// checker: imports, re-exports, `(await import(...)).name` and destructured dynamic imports all
// count. The bundle entries' exports are kept (src/cli.ts: bin/ and scripts/ import them from dist/;
// src/api.ts and the types it re-exports with `export type *`, src/api/types.ts: the package's API;
// emulators/bundle.ts: `par-identity emulator` and the demo scripts import dist/emulators.js;
// src/cli/fast-help.ts: bundled into dist/help.js, which the launcher and the single executable's entry import;
// src/launcher-error.ts: bundled into dist/launcher-error.js, which the launcher imports on a Node too old).
// An export that only tests import is reported too ("used only by tests"): either the product uses it,
// or it is not exported (or not there at all), or a comment right above it says why a test needs it,
// `// exported for tests: <why>` (issue 32: 103 such exports hid behind the tests that import them).
// Usage: node scripts/unused-exports.mjs   (exit 1 when something is reported)
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = new URL('..', import.meta.url).pathname;
const configPath = join(root, 'tsconfig.json');
const config = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, root);
const scripts = readdirSync(join(root, 'scripts'))
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => join(root, 'scripts', f));
const program = ts.createProgram([...config.fileNames, ...scripts], { ...config.options, allowJs: true, checkJs: false });
const checker = program.getTypeChecker();
const ENTRIES = new Set([
  join(root, 'src/cli.ts'),
  join(root, 'src/api.ts'),
  join(root, 'src/api/types.ts'),
  join(root, 'emulators/bundle.ts'),
  join(root, 'src/cli/fast-help.ts'),
  join(root, 'src/launcher-error.ts'),
]);
// Command modules are loaded with import() through a typed loader: their `run` is always used.
const isCommandRun = (file, name) => file.startsWith(join(root, 'src/commands/')) && name === 'run';

/** Symbols the product (src/, scripts/) uses, and those tests use. */
const used = new Set();
const usedByTests = new Set();
const mine = (sf) => !sf.isDeclarationFile && !sf.fileName.includes('/node_modules/');
const isTest = (file) => file.startsWith(join(root, 'test/'));

function markChain(symbol, fromFile) {
  const into = isTest(fromFile) ? usedByTests : used;
  let s = symbol;
  for (let hops = 0; s && hops < 20; hops++) {
    const decl = s.declarations?.[0];
    if (decl && decl.getSourceFile().fileName !== fromFile) into.add(s);
    if (!(s.flags & ts.SymbolFlags.Alias)) break;
    try {
      s = checker.getImmediateAliasedSymbol(s);
    } catch {
      // `export type * from` has no single aliased symbol.
      break;
    }
  }
}

for (const sf of program.getSourceFiles().filter(mine)) {
  const visit = (node) => {
    if (ts.isIdentifier(node)) {
      const sym = checker.getSymbolAtLocation(node);
      if (sym) markChain(sym, sf.fileName);
    }
    // const { a, b: c } = await import('./x.js')
    if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
      const name = (node.propertyName ?? node.name).getText(sf);
      const prop = checker.getTypeAtLocation(node.parent).getProperty(name);
      if (prop) markChain(prop, sf.fileName);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

// The emulators are servers for the tests (and `par-identity emulator`): what tests import of them is their purpose.
const EMULATORS = join(root, 'emulators/');
const FOR_TESTS = /\/\/ exported for tests: \S/;

/** The declaration's own comments, its statement's, or the line right above it say `// exported for tests: <why>`. */
function justifiedForTests(sf, decl) {
  if (!decl) return false;
  let statement = decl;
  while (statement.parent && !ts.isSourceFile(statement.parent)) statement = statement.parent;
  for (const node of [decl, statement]) {
    for (const range of ts.getLeadingCommentRanges(sf.text, node.getFullStart()) ?? []) {
      if (FOR_TESTS.test(sf.text.slice(range.pos, range.end))) return true;
    }
  }
  const line = sf.getLineAndCharacterOfPosition(decl.getStart()).line;
  return line > 0 && FOR_TESTS.test(sf.text.split('\n')[line - 1] ?? '');
}

const unused = [];
const testsOnly = [];
for (const sf of program.getSourceFiles().filter(mine)) {
  if (!(sf.fileName.startsWith(join(root, 'src/')) || sf.fileName.startsWith(join(root, 'emulators/'))) || ENTRIES.has(sf.fileName))
    continue;
  const moduleSymbol = checker.getSymbolAtLocation(sf);
  if (!moduleSymbol) continue;
  for (const exp of checker.getExportsOfModule(moduleSymbol)) {
    if (used.has(exp) || isCommandRun(sf.fileName, exp.getName())) continue;
    const decl = exp.declarations?.[0];
    const where = `${relative(root, sf.fileName)}:${sf.getLineAndCharacterOfPosition(decl?.getStart() ?? 0).line + 1} ${exp.getName()}`;
    if (!usedByTests.has(exp)) unused.push(where);
    else if (!sf.fileName.startsWith(EMULATORS) && !justifiedForTests(sf, decl))
      testsOnly.push(`${where} (used only by tests; say why with \`// exported for tests: <why>\` above it, or un-export it)`);
  }
}
const reported = [...unused, ...testsOnly].sort();
for (const u of reported) console.log(u);
console.error(`${unused.length} unused export(s), ${testsOnly.length} used only by tests without a comment saying why`);
process.exitCode = reported.length > 0 ? 1 : 0;
