import { enrollmentPath, validateApiKey } from '../../enrollment/index.js';
import { enrollKey } from '../enrollment-context.js';
import { need, type Run, type Step } from '../run.js';

/** What is left of --timeout: enrolling gets no more (an expired deadline sends nothing: ENROLL_TIMEOUT). */
function remainingMs(r: Run): number {
  return r.deadline.remainingMs();
}

export const enroll: Step = {
  name: 'enroll',
  title: 'enroll the new key',
  commits: true,
  async run(r) {
    const ctx = need(r.ctx, 'enrollment context');
    const key = need(r.key, 'key');
    const naming = need(r.preflight, 'pre-flight').naming;
    const { urn, ...enrolled } = await enrollKey(ctx, key, naming, remainingMs(r), r.io, r.report);
    r.enrolled = enrolled;
    r.next = { key, urn, apiKeyHash: ctx.apiKeyHash, ...(naming.hostname ? { hostname: naming.hostname } : {}) };
  },
  async plan(r) {
    const ctx = need(r.ctx, 'enrollment context');
    const naming = need(r.preflight, 'pre-flight').naming;
    const checked = await validateApiKey(ctx.endpoint.baseUrl, ctx.credentials.apiKey.value, ctx.extraHeaders, Math.min(remainingMs(r), 15_000), ctx.network);
    const keyNote = checked.transient ? `API key check answered ${checked.transient}` : 'API key accepted by /api/v1/validate';
    r.report.info(keyNote);
    return `${keyNote}; would POST ${ctx.endpoint.baseUrl}${enrollmentPath(ctx.apiKeyOnly)} (flavor ${naming.flavor}, runner name ${naming.runnerNamePrefix}-<UTC time>), retrying within --timeout with the same key`;
  },
};
