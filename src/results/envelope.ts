// The shapes of every --json object, in types only: the renderers are typed by them (so the
// objects the commands build are these), the API returns them, and its shipped declarations are
// them. Any layer may import this folder, as it may import src/errors.ts; it imports nothing else.

/** What every --json object starts with (schema version 1: fields are only ever added). */
export interface Envelope<C extends string = string, S extends string = string> {
  schemaVersion: 1;
  status: S;
  command: C;
}

/** Exactly one of two shapes: the other one's fields read as undefined (so both can be read without narrowing). */
export type OneOf<A, B> = (A & { [K in Exclude<keyof B, keyof A>]?: undefined }) | (B & { [K in Exclude<keyof A, keyof B>]?: undefined });
