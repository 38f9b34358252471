import { PROTOBUF_MESSAGES } from './protobuf-schema.js';
import { bytes, type Field, fields, int, readVarint, str } from './protobuf-wire.js';
import { failure } from './status-errors.js';

// Decodes the messages listed in protobuf-schema.ts into the JSON the same object would have been
// sent as. The Go encoder writes every non-pointer field, zero or not, so zero scalars of
// non-pointer fields are dropped (as `omitempty` drops them from JSON) while pointer fields keep
// theirs (backoffLimit: 0 stays). Non-pointer nested messages decode to {} when empty, as Go
// marshals them to JSON. A field the schema does not know is refused, never silently dropped.

interface FieldSpec {
  name: string;
  type: string;
  pointer: boolean;
  repeated: boolean;
  inline: boolean;
}

type Obj = Record<string, unknown>;

const specs = new Map<string, Map<number, FieldSpec>>();

function specOf(message: string): Map<number, FieldSpec> {
  let spec = specs.get(message);
  if (spec) return spec;
  const text = PROTOBUF_MESSAGES[message];
  if (text === undefined) throw unsupported(`message ${message}`);
  spec = new Map();
  for (const entry of text.split(' ')) {
    const [no, name, type, flags = ''] = entry.split(':') as [string, string, string, string?];
    spec.set(Number(no), { name, type, pointer: flags.includes('p'), repeated: flags.includes('r'), inline: flags.includes('n') });
  }
  specs.set(message, spec);
  return spec;
}

function unsupported(what: string) {
  return failure(415, 'UnsupportedMediaType', `the emulator cannot decode ${what} from protobuf; send application/json`);
}

function time(buf: Buffer): string | undefined {
  let seconds = 0;
  for (const f of fields(buf)) if (f.no === 1) seconds = int(f);
  // An empty Timestamp is the zero time, which JSON carries as null: leave the field out.
  if (seconds === 0 && buf.length === 0) return undefined;
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function intOrString(buf: Buffer): number | string {
  let type = 0;
  let intVal = 0;
  let strVal = '';
  for (const f of fields(buf)) {
    if (f.no === 1) type = int(f);
    if (f.no === 2) intVal = int(f);
    if (f.no === 3) strVal = str(f);
  }
  return type === 1 ? strVal : intVal;
}

function embeddedJson(buf: Buffer): unknown {
  for (const f of fields(buf)) {
    if (f.no !== 1) continue;
    const text = str(f);
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return {};
}

/** Go's time.Duration.String() for whole seconds and above, as metav1.Duration marshals to JSON. */
function duration(buf: Buffer): string {
  let ns = 0;
  for (const f of fields(buf)) if (f.no === 1) ns = int(f);
  const total = Math.round(ns / 1e9);
  if (total === 0) return ns === 0 ? '0s' : `${ns / 1e9}s`;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

function scalar(type: string, f: Field): unknown {
  switch (type) {
    case 's':
      return str(f);
    case 'i':
      return int(f);
    case 'b':
      return f.value !== 0n;
    case 'd':
      return (f.value as Buffer).readDoubleLE(0);
    case 'y':
      return bytes(f).toString('base64');
    case 'T':
      return time(bytes(f));
    case 'Q':
      return embeddedJsonString(bytes(f));
    case 'I':
      return intOrString(bytes(f));
    case 'R':
      return embeddedJson(bytes(f));
    case 'D':
      return duration(bytes(f));
  }
  if (type.startsWith('@')) return decodeMessage(type.slice(1), bytes(f));
  throw unsupported(`a field of type ${type}`);
}

/** resource.Quantity: a message whose field 1 is the string form. */
function embeddedJsonString(buf: Buffer): string {
  for (const f of fields(buf)) if (f.no === 1) return str(f);
  return '';
}

function mapEntry(type: string, f: Field): [string, unknown] {
  const [keyType, valueType] = type.slice(4, -1).split(',') as [string, string];
  let key: unknown = '';
  let value: unknown = valueType === 's' ? '' : undefined;
  for (const e of fields(bytes(f))) {
    if (e.no === 1) key = scalar(keyType, e);
    if (e.no === 2) value = scalar(valueType, e);
  }
  return [String(key), value];
}

/** A repeated integer field may arrive packed (one length-delimited run of varints). */
function packedInts(f: Field): number[] {
  const buf = bytes(f);
  const out: number[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [v, next] = readVarint(buf, pos);
    out.push(Number(BigInt.asIntN(64, v)));
    pos = next;
  }
  return out;
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false || v === undefined;
}

export function decodeMessage(message: string, buf: Buffer): Obj {
  const spec = specOf(message);
  const out: Obj = {};
  for (const f of fields(buf)) {
    const field = spec.get(f.no);
    if (!field || field.type === 'x') throw unsupported(`field ${f.no}${field ? ` (${field.name})` : ''} of ${message}`);
    if (field.type.startsWith('map<')) {
      const [k, v] = mapEntry(field.type, f);
      const map = (out[field.name] ?? {}) as Obj;
      map[k] = v;
      out[field.name] = map;
      continue;
    }
    if (field.repeated) {
      const list = (out[field.name] ?? []) as unknown[];
      if (field.type === 'i' && f.wire === 2) list.push(...packedInts(f));
      else list.push(scalar(field.type, f));
      out[field.name] = list;
      continue;
    }
    const value = scalar(field.type, f);
    if (field.inline) Object.assign(out, value as Obj);
    else if (field.pointer ? value !== undefined : !isZero(value)) out[field.name] = value;
  }
  return out;
}
