/**
 * A CommonJS package loaded with import(): node exposes its named exports, but esbuild's code
 * splitting exposes only `default`. Callers of lazy CommonJS imports (yaml, undici) go through this.
 */
export function commonJs<T extends object>(mod: T): T {
  const keys = Object.keys(mod);
  return keys.length === 1 && keys[0] === 'default' ? ((mod as { default: T }).default as T) : mod;
}
