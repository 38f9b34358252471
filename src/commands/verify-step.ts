import { type HealthCheckInput, type RetryPolicy, verifyOnline } from '../enrollment/index.js';

export type VerifyReport = { performed: false } | { performed: true; ok: boolean; status?: number; reason?: string; attempts: number };

export async function verifyStep(input: HealthCheckInput, timeoutSeconds: number, policy: RetryPolicy): Promise<VerifyReport> {
  const result = await verifyOnline(input, { timeoutMs: timeoutSeconds * 1000, policy });
  return { performed: true, ...result };
}

export function describeVerify(verify: VerifyReport): string {
  if (!verify.performed) return 'skipped (--no-verify)';
  return verify.ok ? `yes (health check HTTP ${verify.status})` : `NO (${verify.reason})`;
}
