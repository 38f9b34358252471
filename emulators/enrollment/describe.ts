/** Start-up banner of `par-identity emulator`: what to point the CLI at and how to script it. */
import { DEFAULT_API_KEY, DEFAULT_APP_KEY, DEFAULT_FORBIDDEN_APP_KEY } from './options.js';

interface Describable {
  url: string;
  otherHostUrl: string;
  otherHostIsDistinctAddress: boolean;
  orgId: number;
  options: { apiKeys: readonly string[]; appKeys: readonly string[]; forbiddenAppKeys: readonly string[]; maxClockSkewSeconds: number };
}

/** Only the built-in fake keys are printed; keys passed in by the caller may be real ones. */
function keyHint(keys: readonly string[], fake: string): string {
  if (keys.length === 0) return '(none)';
  const custom = keys.filter((k) => k !== fake).length;
  const shown = keys.includes(fake) ? [fake] : [];
  if (custom > 0) shown.push(`${custom} custom key${custom === 1 ? '' : 's'} (not shown)`);
  return shown.join(', ');
}

export function describeEmulator(emu: Describable): string[] {
  const o = emu.options;
  return [
    `Datadog enrollment API emulator listening on ${emu.url}`,
    `  dd_url:            ${emu.url}   (with DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true)`,
    `  API key:           ${keyHint(o.apiKeys, DEFAULT_API_KEY)}   (test keys are fake)`,
    `  application key:   ${keyHint(o.appKeys, DEFAULT_APP_KEY)}`,
    `  app key → 403:     ${keyHint(o.forbiddenAppKeys, DEFAULT_FORBIDDEN_APP_KEY)}`,
    `  org id:            ${emu.orgId}   (JWT clock skew allowed: ${o.maxClockSkewSeconds} s)`,
    `  redirect target:   ${emu.otherHostUrl}${emu.otherHostIsDistinctAddress ? '' : '   (same address, other port: no second loopback address here)'}`,
    `  control API:       ${emu.url}/__emulator/{info,requests,runners} (GET), {script,revoke,reset} (POST JSON)`,
    `    e.g. curl -s -X POST ${emu.url}/__emulator/script -d '{"route":"enroll","steps":[{"status":503,"retryAfter":"1"}]}'`,
  ];
}
