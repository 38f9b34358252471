import { ExitCode } from '../../errors.js';
import type { CommandResult } from '../../output.js';
import type { IdentityStatusResult, LastVerified, PossibleOrphan, SiteRegion, StatusFinding } from '../../results/status.js';
import { ageOf, describeAge } from '../age.js';
import { rollbackCommandOf } from '../../command-line.js';
import { need, type Run } from '../run.js';
import { type CurrentIdentity, summaryOf } from '../target.js';
import { describeVerify } from '../verify-step.js';
import { describeInProgress, describeOrphan } from '../orphans.js';

/** Which identity last passed the health check, and whether it is the one in service or the previous (docs/identity-lifecycle.md §1). */
function lastVerifiedOf(current: CurrentIdentity, inService: string | null): LastVerified | null {
  const mark = current.lastVerified;
  if (!mark) return null;
  const is = mark.fingerprint === inService ? 'current' : mark.fingerprint === current.previous?.key.kid ? 'previous' : 'neither';
  return { fingerprint: mark.fingerprint, urn: mark.urn, verifiedAt: mark.verifiedAt, is };
}

function describeLastVerified(mark: LastVerified | null): string {
  if (!mark) return 'unknown (no rotation or rollback by par-identity has passed the health check here)';
  const where =
    mark.is === 'current'
      ? 'the identity in service'
      : mark.is === 'previous'
        ? 'the PREVIOUS identity: the one in service never passed; roll back or rotate'
        : 'held neither in service nor as previous';
  return `${mark.urn} (fingerprint ${mark.fingerprint}) at ${mark.verifiedAt}: ${where}`;
}

function describeSiteRegion(found: SiteRegion): string {
  const base = `${found.site} (from ${found.source}), region ${found.region}`;
  return found.matchesIdentity ? `${base}: the identity's` : `${base}: NOT the identity's region ${found.identityRegion}`;
}

/**
 * Every finding, in the order of their exit statuses' precedence: a predicted re-enrollment (14),
 * which concerns the identity in service, before a possible orphan (15); a rotation under way changes
 * nothing to the exit status (0). Scripts read the whole list, whatever the exit status says.
 */
function findingsOf(
  data: { agentWouldReEnroll?: boolean; reEnrollReasons?: string[] },
  orphans: PossibleOrphan[],
  inProgress: PossibleOrphan[],
): (StatusFinding & { kind: IdentityStatusResult['status'] })[] {
  const where = (o: PossibleOrphan) => ({ path: o.path, fingerprint: o.fingerprint });
  return [
    ...(data.agentWouldReEnroll === true
      ? [
          {
            kind: 'reenroll-predicted' as const,
            exitCode: ExitCode.reenrollPredicted,
            message: `the agent would enroll again at its next start: ${(data.reEnrollReasons ?? []).join('; ')}`,
          },
        ]
      : []),
    ...orphans.map((o) => ({
      kind: 'possible-orphan' as const,
      exitCode: ExitCode.orphanPossible,
      message: describeOrphan(o),
      ...where(o),
    })),
    ...inProgress.map((o) => ({
      kind: 'rotation-in-progress' as const,
      exitCode: ExitCode.ok,
      message: describeInProgress(o),
      ...where(o),
    })),
  ];
}

/** status of one target: what is in service, what a rollback would restore, the target's facts, the online check. */
export function statusResult(r: Run): CommandResult<IdentityStatusResult> {
  const { target } = need(r.resolved, 'target');
  const current = need(r.current, 'current identity');
  const facts = need(r.facts, 'facts');
  const verify = r.verify ?? { performed: false };
  const now = summaryOf(need(r.inService, 'identity in service'));
  const age = ageOf(current.rotatedAt, r.io.now());
  const possibleOrphans = facts.possibleOrphans ?? [];
  const rotationsInProgress = facts.rotationsInProgress ?? [];
  const findings = findingsOf(
    facts.data as { agentWouldReEnroll?: boolean; reEnrollReasons?: string[] },
    possibleOrphans,
    rotationsInProgress,
  );
  // The first finding sets the exit status and the word: the list is in that order (docs/output.md).
  const first = findings[0];
  const exitCode = first?.exitCode ?? ExitCode.ok;
  return {
    ...(exitCode === ExitCode.ok ? {} : { exitCode }),
    json: {
      schemaVersion: 1,
      status: first?.kind ?? 'ok',
      command: 'status',
      exitCode,
      findings,
      target: target.kind,
      ...target.where,
      ...now,
      current: now,
      rotatedAt: current.rotatedAt ?? null,
      ageSeconds: age,
      ...facts.data,
      lastVerified: lastVerifiedOf(current, now.fingerprint),
      possibleOrphans,
      rotationsInProgress,
      rollbackCommand: rollbackCommandOf(target),
      verify,
      siteRegion: need(r.siteRegion, 'site region'),
      unknownFields: current.unknownFields ?? [],
    },
    summary: [
      `identity: ${now.urn}  (${target.label})`,
      `  org / runner: ${now.orgId} / ${now.runnerId} (region ${now.region})`,
      `  fingerprint:  ${now.fingerprint}`,
      `  site:         ${describeSiteRegion(need(r.siteRegion, 'site region'))}`,
      ...(current.unknownFields?.length
        ? [
            `  UNKNOWN FIELDS: ${current.unknownFields.join(', ')} (a newer agent's; a rotation or rollback stops unless --override-agent-settings)`,
          ]
        : []),
      `  written:      ${current.rotatedAt ? `${current.rotatedAt} (${describeAge(age ?? 0)} ago; from ${current.rotatedAtSource})` : 'unknown'}`,
      ...facts.lines,
      ...possibleOrphans.map((o) => `  POSSIBLE ORPHAN (${o.state}): ${describeOrphan(o)}`),
      ...rotationsInProgress.map((o) => `  ROTATION IN PROGRESS: ${describeInProgress(o)}`),
      `  last verified: ${describeLastVerified(lastVerifiedOf(current, now.fingerprint))}`,
      `  verified:     ${r.spec.options.verify ? describeVerify(verify) : 'not checked (add --verify)'}`,
    ],
  };
}
