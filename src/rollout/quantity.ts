// Kubernetes resource quantities, enough for scheduling arithmetic: cpu in millicores, memory in bytes.

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** Parses a quantity to its base unit (cores or bytes); undefined when malformed. */
// exported for tests: every quantity suffix, checked alone
export function parseQuantity(text: string | number | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (typeof text === 'number') return text;
  const match = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/.exec(text.trim());
  if (!match) return undefined;
  const value = Number(match[1]);
  const suffix = match[2] ?? '';
  return value * (BINARY[suffix] ?? DECIMAL[suffix] ?? 1);
}

export function milliCpu(text: string | number | undefined): number {
  return Math.round((parseQuantity(text) ?? 0) * 1000);
}

export function bytes(text: string | number | undefined): number {
  return Math.round(parseQuantity(text) ?? 0);
}
