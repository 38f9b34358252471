// What a YAML scalar of datadog.yaml is to the Go agent. The agent reads its config with
// gopkg.in/yaml.v2 v2.4.0 (pkg/config/nodetreemodel/read_config_file.go, readConfigurationContent),
// whose rules are YAML 1.1's, not the YAML 1.2 core schema JavaScript parsers default to: `yes`, `on`
// and `y` are true, `0755` is octal, `12:30` and timestamps stay strings. This file is those rules,
// written from yaml.v2's resolve.go (`resolve`) and Go's strconv; docs/config-yaml.md has the table.

type YamlScalar = string | number | boolean | null;

/** yaml.v2's resolve tags, long form as the yaml library gives explicit tags. */
type ResolvedTag = 'str' | 'bool' | 'int' | 'float' | 'null';

// resolve.go init(): the words looked up whole, before any number parsing.
const WORDS = new Map<string, [ResolvedTag, YamlScalar]>();
for (const w of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) WORDS.set(w, ['bool', true]);
for (const w of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']) WORDS.set(w, ['bool', false]);
for (const w of ['', '~', 'null', 'Null', 'NULL']) WORDS.set(w, ['null', null]);
for (const w of ['.nan', '.NaN', '.NAN']) WORDS.set(w, ['float', Number.NaN]);
for (const w of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) WORDS.set(w, ['float', Number.POSITIVE_INFINITY]);
for (const w of ['-.inf', '-.Inf', '-.INF']) WORDS.set(w, ['float', Number.NEGATIVE_INFINITY]);

/** resolve.go's yamlStyleFloat. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** What strconv.ParseInt(s, 0, 64) reads (underscores are already gone): sign, base prefix, digits. */
const GO_INT = /^([+-]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|0([0-7]+)|([0-9]+))$/;
const INT64_MIN = -(2n ** 63n);
const INT64_END = 2n ** 63n;
const UINT64_END = 2n ** 64n;

/** strconv.ParseInt(s, 0, 64), else strconv.ParseUint(s, 0, 64) (no sign); undefined when both fail. */
function parseGoInt(s: string): number | undefined {
  const m = GO_INT.exec(s);
  if (!m) return undefined;
  const [, sign, hex, octal, binary, leadingZeroOctal, decimal] = m;
  let magnitude: bigint;
  if (hex !== undefined) magnitude = BigInt(`0x${hex}`);
  else if (octal !== undefined) magnitude = BigInt(`0o${octal}`);
  else if (binary !== undefined) magnitude = BigInt(`0b${binary}`);
  else if (leadingZeroOctal !== undefined) magnitude = BigInt(`0o${leadingZeroOctal}`);
  else if (decimal !== undefined && (decimal === '0' || decimal[0] !== '0')) magnitude = BigInt(decimal);
  // "08", "09": a leading zero makes it octal, and 8 and 9 are not octal digits.
  else return undefined;
  const value = sign === '-' ? -magnitude : magnitude;
  const fits = (value >= INT64_MIN && value < INT64_END) || (sign === '' && value < UINT64_END);
  // Past 2^53 the number is the nearest double: JavaScript has no 64-bit integer that is also a number.
  return fits ? Number(value) : undefined;
}

/** Go's underscoreOK: an underscore only between digits. */
function underscoreOk(s: string): boolean {
  let saw = '^';
  for (let i = s[0] === '+' || s[0] === '-' ? 1 : 0; i < s.length; i++) {
    const c = s[i]!;
    if (c >= '0' && c <= '9') saw = '0';
    else if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else {
      if (saw === '_') return false;
      saw = '!';
    }
  }
  return saw !== '_';
}

const DECIMAL_FLOAT = /^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;

/** strconv.ParseFloat(s, 64) for the decimal forms yaml.v2 hands it; undefined on a syntax or range error. */
function parseGoFloat(s: string): number | undefined {
  if (s.includes('_') && !underscoreOk(s)) return undefined;
  const digits = s.replaceAll('_', '');
  if (!DECIMAL_FLOAT.test(digits)) return undefined;
  const value = Number(digits);
  // ParseFloat answers ±Inf with ErrRange past the largest double, and yaml.v2 then keeps the string.
  return Number.isFinite(value) ? value : undefined;
}

/** yaml.v2 resolve("", text) for an untagged plain scalar: the tag it settles on and the value. */
export function resolvePlainTagged(text: string): [ResolvedTag, YamlScalar] {
  const word = WORDS.get(text);
  if (word) return word;
  const first = text[0]!;
  // resolveTable: only these first characters can start anything but a string.
  if (first === '.') {
    const f = parseGoFloat(text);
    return f === undefined ? ['str', text] : ['float', f];
  }
  if (!((first >= '0' && first <= '9') || first === '+' || first === '-')) return ['str', text];
  // Timestamps (YYYY-…) are tried first, but a timestamp decoded into interface{} is its text
  // (decode.go, scalar: "for backward compatibility"), and no timestamp is also a number: skipped.
  const plain = text.replaceAll('_', '');
  const int = parseGoInt(plain);
  if (int !== undefined) return ['int', int];
  if (YAML_STYLE_FLOAT.test(plain)) {
    const f = parseGoFloat(plain);
    if (f !== undefined) return ['float', f];
  }
  // The 0b branch after ParseInt: reached only by forms ParseInt refused, such as "0b-1" (ParseInt(…, 2)
  // takes a sign), with ParseUint for "0b" and 64 bits.
  const binary = plain.startsWith('0b') ? plain.slice(2) : plain.startsWith('-0b') ? `-${plain.slice(3)}` : undefined;
  const bits = binary === undefined ? null : /^([+-]?)([01]+)$/.exec(binary);
  if (bits) {
    const v = bits[1] === '-' ? -BigInt(`0b${bits[2]}`) : BigInt(`0b${bits[2]}`);
    if ((v >= INT64_MIN && v < INT64_END) || (bits[1] === '' && plain.startsWith('0b') && v < UINT64_END)) return ['int', Number(v)];
  }
  return ['str', text];
}

/** The value yaml.v2 gives an untagged plain scalar. */
export function resolvePlainScalar(text: string): YamlScalar {
  return resolvePlainTagged(text)[1];
}

const TAG_PREFIX = 'tag:yaml.org,2002:';

/**
 * yaml.v2 resolve(tag, text) for a scalar with an explicit tag: `!!str` keeps the text, `!!int`/`!!bool`/
 * `!!float`/`!!null` must resolve to that type (an int is accepted as a float), a tag yaml.v2 does not
 * resolve (`!custom`, `!!set`) leaves the text. An Error when the text is not of the tag's type.
 */
export function resolveTaggedScalar(tag: string, text: string): YamlScalar | Error {
  const short = tag.startsWith(TAG_PREFIX) ? tag.slice(TAG_PREFIX.length) : undefined;
  if (short === 'str' || short === 'timestamp' || short === 'binary') {
    if (short === 'binary') return Buffer.from(text, 'base64').toString('utf8');
    if (short === 'timestamp' && !/^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}/.test(text))
      return new Error(`cannot decode !!str \`${text}\` as a !!timestamp`);
    return text;
  }
  if (short !== 'bool' && short !== 'int' && short !== 'float' && short !== 'null') return text;
  const [resolved, value] = resolvePlainTagged(text);
  if (resolved === short) return value;
  if (short === 'float' && resolved === 'int') return value;
  return new Error(`cannot decode !!${resolved} \`${text}\` as a !!${short}`);
}
