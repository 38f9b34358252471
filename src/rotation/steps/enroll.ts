import { enrollmentPath, runnerNameSuffix, validateApiKey, validateAppKey } from '../../enrollment/index.js';
import { ParError } from '../../errors.js';
import type { CredentialCheck } from '../../results/rotation.js';
import { thisRun } from '../../storage/run-holder.js';
import { enrollKey } from '../enrollment-context.js';
import { need, type Run, type Step } from '../run.js';

/** What is left of --timeout: enrolling gets no more (an expired deadline sends nothing: ENROLL_TIMEOUT). */
function remainingMs(r: Run): number {
  return r.deadline.remainingMs();
}

/** Owned enrollment: what no read-only request can tell (docs/protocol.md §13). */
const ENROLL_PERMISSION_UNPROVEN =
  "whether the application key may enroll runners (its scopes and its owner's permissions): only the enrollment checks that";

/** Both keys through Datadog's read-only checks: the API key alone, then the application key with it. */
async function checkCredentials(r: Run): Promise<CredentialCheck> {
  const ctx = need(r.ctx, 'enrollment context');
  const budget = () => Math.min(remainingMs(r), 15_000);
  const apiKey = await validateApiKey(ctx.endpoint.baseUrl, ctx.credentials.apiKey.value, ctx.extraHeaders, budget(), ctx.network);
  const unproven = apiKey.unproven ? [`the API key: its check answered ${apiKey.unproven}`] : [];
  if (!ctx.credentials.appKey) return { apiKey: apiKey.unproven ? 'unproven' : 'accepted', appKey: null, unproven };
  const appKey = await validateAppKey(
    ctx.endpoint.baseUrl,
    ctx.credentials.apiKey.value,
    ctx.credentials.appKey.value,
    ctx.extraHeaders,
    budget(),
    ctx.network,
  );
  if (appKey.unproven) unproven.push(`the application key: ${appKey.unproven}`);
  unproven.push(ENROLL_PERMISSION_UNPROVEN);
  return { apiKey: apiKey.unproven ? 'unproven' : 'accepted', appKey: appKey.unproven ? 'unproven' : 'accepted', unproven };
}

/** "API key accepted by /api/v1/validate, application key accepted by /api/v2/validate_keys". */
export function describeCredentialCheck(check: CredentialCheck): string {
  const api = check.apiKey === 'accepted' ? 'API key accepted by /api/v1/validate' : 'API key unproven';
  if (check.appKey === null) return `${api} (API-key-only enrollment: no application key)`;
  return `${api}, ${check.appKey === 'accepted' ? 'application key accepted by /api/v2/validate_keys' : 'application key unproven'}`;
}

/**
 * Endings that prove the server registered nothing, when no attempt before went unanswered: a refusal,
 * or a deadline reached with every attempt failing before it reached a server (connection refused, the
 * resolver not answering: NOT_SENT in src/enrollment/enroll.ts).
 */
const REGISTERED_NOTHING = new Set([
  'CREDENTIALS_REJECTED',
  'ENROLL_REJECTED',
  'ENROLL_REDIRECT_REFUSED',
  'ENROLL_HOST_UNKNOWN',
  'TLS_UNTRUSTED',
  'ENROLL_TIMEOUT',
]);

export const enroll: Step = {
  name: 'enroll',
  title: 'enroll the new key',
  async run(r) {
    if (r.resumed) return r.report.info(`not enrolling: ${need(r.next, 'new identity').urn} is the runner of the pending key`);
    const ctx = need(r.ctx, 'enrollment context');
    const key = need(r.key, 'key');
    const naming = need(r.preflight, 'pre-flight').naming;
    const { target } = need(r.resolved, 'target');
    const now = r.io.now();
    // Kept durably before the request leaves: a crash after the server registered the key and before
    // the write leaves it where the next run finds it (docs/identity-lifecycle.md §3). The record names
    // this run and its deadline, so `status` meanwhile says "rotation in progress", not "orphan".
    const holder = Number.isFinite(r.deadline.atMs) ? { holder: thisRun(r.deadline.atMs) } : {};
    await target.pending?.keep(key, {
      createdAt: now,
      runnerName: `${naming.runnerNamePrefix}-${runnerNameSuffix(now)}`,
      enrollmentUrl: `${ctx.endpoint.baseUrl}${enrollmentPath(ctx.apiKeyOnly)}`,
      ...holder,
    });
    let maybeRegistered = false;
    try {
      const onAttemptFailed = (outcome: 'unsent' | 'unknown') => {
        if (outcome === 'unknown') maybeRegistered = true;
      };
      const { urn, ...enrolled } = await enrollKey(ctx, key, naming, r.deadline, r.io, r.report, { now, onAttemptFailed });
      r.enrolled = enrolled;
      r.next = {
        key,
        urn,
        apiKeyHash: ctx.apiKeyHash,
        ...(naming.hostname ? { hostname: naming.hostname } : {}),
        runnerName: enrolled.runnerName,
      };
    } catch (err) {
      if (target.pending) {
        if (!maybeRegistered && err instanceof ParError && REGISTERED_NOTHING.has(err.code))
          await target.pending.clear().catch(() => undefined);
        else
          r.report.warn(
            `the key sent for enrollment (fingerprint ${key.kid}) is kept: the server may have registered it; ` +
              `the next rotation reports it as a possible orphan, \`par-identity status\` lists it`,
          );
      }
      throw err;
    }
    // The pending record names the runner before its health check: a run that cannot prove it (Datadog
    // unavailable, the run stopped) leaves a key the next run verifies again and writes instead of
    // enrolling another runner (docs/identity-lifecycle.md §3). Without a verification the write follows at once.
    if (r.spec.options.verify && target.pending) {
      const { urn } = r.next;
      await target.pending.amend({ urn }).catch((err: unknown) => {
        r.report.warn(
          `could not record ${urn} with the pending key: ${(err as Error).message}; ` +
            'if this run cannot prove it, the next one sets the key aside instead of verifying it again',
        );
      });
    }
  },
  async plan(r) {
    const ctx = need(r.ctx, 'enrollment context');
    const naming = need(r.preflight, 'pre-flight').naming;
    const check = await checkCredentials(r);
    r.credentialCheck = check;
    const keyNote = describeCredentialCheck(check);
    r.report.info(keyNote);
    for (const note of check.unproven) r.report.info(`not proven: ${note}`);
    const store = need(r.resolved, 'target').target.pending;
    const pending = store ? `; the key is kept as pending in ${store.where} until it is written` : '';
    return (
      `${keyNote}; not proven: ${check.unproven.length ? check.unproven.join('; ') : 'nothing'}; ` +
      `would POST ${ctx.endpoint.baseUrl}${enrollmentPath(ctx.apiKeyOnly)} (flavor ${naming.flavor}, ` +
      `runner name ${naming.runnerNamePrefix}-<UTC time>), retrying within --timeout with the same key${pending}`
    );
  },
};
