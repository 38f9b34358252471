// The one registry of the secrets this process holds (docs/security.md, "One redaction"): API and
// application keys, bearer tokens and basic passwords for the Kubernetes API (kubeconfig, service
// account, exec plugin), client private keys, identity private keys (the base64url JWK and its `d`)
// and signed runner tokens. Each is registered where it is read or made; the sanitizer (sanitize.ts)
// and the output boundaries (output.ts, the watch event lines, Kubernetes Events) mask every one of
// them, so a server that repeats a key in its error body cannot get it printed, put in --json, sent
// in an Event or logged.
//
// A secret is masked as it is and in the forms a server may echo it: JSON-escaped, base64 and
// base64url, percent-encoded; and a text ending in the first part of a secret (a body the server or
// our reader cut short) loses that part too.

/** Shorter values are not masked (masking every "abc" would garble text and protect nothing). */
const MIN_SECRET_LENGTH = 8;
/** A cut-off echo is masked from this many characters on (shorter prefixes are ordinary text). */
const MIN_PARTIAL_LENGTH = 12;
/**
 * The most values held at once: `watch` re-reads rotating service-account tokens for days. The oldest
 * goes first; it is long expired by then.
 */
const MAX_HELD = 256;

interface Form {
  text: string;
  mask: string;
}

/** value → what it is ("API key"), in registration order (oldest first). */
const held = new Map<string, string>();
/** Every form of every value held, longest first; rebuilt after a registration. */
let forms: Form[] = [];

const maskOf = (what: string) => `[redacted ${what}]`;

function formsOf(value: string): string[] {
  const out = new Set<string>([value]);
  out.add(JSON.stringify(value).slice(1, -1));
  out.add(Buffer.from(value, 'utf8').toString('base64'));
  out.add(Buffer.from(value, 'utf8').toString('base64').replace(/=+$/, ''));
  out.add(Buffer.from(value, 'utf8').toString('base64url'));
  out.add(encodeURIComponent(value));
  return [...out].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

function rebuild(): void {
  const all: Form[] = [];
  for (const [value, what] of held) for (const text of formsOf(value)) all.push({ text, mask: maskOf(what) });
  forms = all.sort((a, b) => b.text.length - a.text.length);
}

/**
 * Registers a secret this process holds; `what` names it in the mask ("API key", "bearer token").
 * Values shorter than 8 characters are not registered. Idempotent.
 */
export function holdSecret(what: string, value: string | Buffer | undefined | null): void {
  if (value === undefined || value === null) return;
  const text = (typeof value === 'string' ? value : value.toString('utf8')).trim();
  if (text.length < MIN_SECRET_LENGTH || held.has(text)) return;
  held.set(text, what);
  while (held.size > MAX_HELD) held.delete(held.keys().next().value as string);
  rebuild();
}

/**
 * `text` with every registered secret, in each of its forms, replaced by `[redacted <what>]`; with
 * `cutOff` (the default) a text ending in the first part of one loses that part too.
 */
export function maskHeldSecrets(text: string, options: { cutOff?: boolean } = {}): string {
  if (forms.length === 0 || text.length < MIN_SECRET_LENGTH) return text;
  let out = text;
  for (const form of forms) if (out.includes(form.text)) out = out.split(form.text).join(form.mask);
  if (options.cutOff === false) return out;
  // A cut-off echo: the text ends in the first part of a secret.
  const tail = out.slice(-MIN_PARTIAL_LENGTH);
  for (const form of forms) {
    if (!form.text.includes(tail)) continue;
    for (let n = Math.min(form.text.length - 1, out.length); n >= MIN_PARTIAL_LENGTH; n--) {
      if (out.endsWith(form.text.slice(0, n))) {
        out = `${out.slice(0, out.length - n)}${form.mask}`;
        break;
      }
    }
  }
  return out;
}

/** Every value registered so far is forgotten (tests only). */
// exported for tests: each test starts with no secret held
export function forgetHeldSecrets(): void {
  held.clear();
  forms = [];
}
