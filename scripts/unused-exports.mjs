// Lists exports of src/ and emulators/ that no other file imports (src/, emulators/, test/, scripts/), with the TypeScript
// checker: imports, re-exports, `(await import(...)).name` and destructured dynamic imports all
// count. The bundle entries' exports are kept (src/cli.ts: bin/ and scripts/ import them from dist/;
// src/api.ts and the types it re-exports with `export type *`, src/api/types.ts: the package's API;
// emulators/bundle.ts: `par-identity emulator` and the demo scripts import dist/emulators.js;
// src/cli/fast-help.ts: bundled into dist/help.js, which the launcher and the single executable's entry import).
// Usage: node scripts/unused-exports.mjs   (exit 1 when something is unused)
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = new URL('..', import.meta.url).pathname;
const configPath = join(root, 'tsconfig.json');
const config = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, root);
const scripts = readdirSync(join(root, 'scripts')).filter((f) => f.endsWith('.mjs')).map((f) => join(root, 'scripts', f));
const program = ts.createProgram([...config.fileNames, ...scripts], { ...config.options, allowJs: true, checkJs: false });
const checker = program.getTypeChecker();
const ENTRIES = new Set([join(root, 'src/cli.ts'), join(root, 'src/api.ts'), join(root, 'src/api/types.ts'), join(root, 'emulators/bundle.ts'), join(root, 'src/cli/fast-help.ts')]);
// Command modules are loaded with import() through a typed loader: their `run` is always used.
const isCommandRun = (file, name) => file.startsWith(join(root, 'src/commands/')) && name === 'run';

const used = new Set();
const mine = (sf) => !sf.isDeclarationFile && !sf.fileName.includes('/node_modules/');

function markChain(symbol, fromFile) {
  let s = symbol;
  for (let hops = 0; s && hops < 20; hops++) {
    const decl = s.declarations?.[0];
    if (decl && decl.getSourceFile().fileName !== fromFile) used.add(s);
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

const unused = [];
for (const sf of program.getSourceFiles().filter(mine)) {
  if (!(sf.fileName.startsWith(join(root, 'src/')) || sf.fileName.startsWith(join(root, 'emulators/'))) || ENTRIES.has(sf.fileName)) continue;
  const moduleSymbol = checker.getSymbolAtLocation(sf);
  if (!moduleSymbol) continue;
  for (const exp of checker.getExportsOfModule(moduleSymbol)) {
    if (used.has(exp) || isCommandRun(sf.fileName, exp.getName())) continue;
    const line = sf.getLineAndCharacterOfPosition(exp.declarations?.[0]?.getStart() ?? 0).line + 1;
    unused.push(`${relative(root, sf.fileName)}:${line} ${exp.getName()}`);
  }
}
unused.sort();
for (const u of unused) console.log(u);
console.error(`${unused.length} unused export(s)`);
process.exitCode = unused.length > 0 ? 1 : 0;
