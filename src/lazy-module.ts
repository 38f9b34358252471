/**
 * A CommonJS package loaded with import(): node exposes its named exports, but the module the build
 * makes of it (scripts/build.mjs, LAZY_LIBRARIES) exposes only `default`. Callers of lazy CommonJS
 * imports (yaml) go through this.
 */
export function commonJs<T extends object>(mod: T): T {
  const keys = Object.keys(mod);
  return keys.length === 1 && keys[0] === 'default' ? ((mod as { default: T }).default as T) : mod;
}
