import { ParError } from '../../errors.js';
import type { SecretLayout, SecretRef } from '../../kube/index.js';

// The long operator messages of the Secret targets (secret-base.ts), each a named builder so the
// write path reads as what it does, and each message can be read whole in one place.

const CHECK_BEFORE_REMOVING = 'Do not remove any runner in Datadog until you have checked which one the Secret holds.';

/**
 * OUTCOME_UNKNOWN after a write the API may have applied, when the Secret read back holds neither
 * identity (`readBack`) or cannot be read at all; `enrolledUrn` when a rotation enrolled a runner
 * that may now be stored nowhere (docs/safety.md).
 */
export function secretWriteOutcomeUnknown(input: {
  what: string;
  label: string;
  apiAnswer: string;
  readBack: boolean;
  check: string;
  ref: SecretRef;
  enrolledUrn?: string | undefined;
}): ParError<'OUTCOME_UNKNOWN'> {
  const { ref, enrolledUrn } = input;
  const seen = input.readBack ? 'the Secret now holds neither the identity we read nor the one we wrote' : 'the Secret cannot be read back';
  const ifRotated = enrolledUrn
    ? `If it shows ${enrolledUrn}, the rotation is in place; if not, ${enrolledUrn} is enrolled but stored nowhere. `
    : '';
  return new ParError(
    'OUTCOME_UNKNOWN',
    `${input.what} in ${input.label} may or may not have been applied: the API answered "${input.apiAnswer}" and ${seen}`,
    `Check before acting: \`${input.check}\` (or kubectl -n ${ref.namespace} get secret ${ref.name}). ${ifRotated}${CHECK_BEFORE_REMOVING}`,
    { ...(enrolledUrn ? { enrolledUrn } : {}), namespace: ref.namespace, secretName: ref.name },
  );
}

/** The summary line of the identity a rotation kept as the previous one, and why that one. */
export function keptPreviousLine(
  keptUrn: string | undefined,
  layout: SecretLayout,
  why: { currentDecodes: boolean; unverifiedDropped: boolean },
): string {
  const reason = !why.currentDecodes
    ? ' (the current one did not decode; the previous is kept)'
    : why.unverifiedDropped
      ? ' (the last verified one; the current one never passed verification)'
      : '';
  return `  kept:         ${keptUrn} as ${layout.previousUrn} / ${layout.previousPrivateKey}${reason}`;
}

/** The warning when the identity in service never passed verification: it is replaced and not kept. */
export function unverifiedNotKeptWarning(droppedUrn: string, layout: SecretLayout, keptUrn: string | undefined): string {
  return (
    `${droppedUrn} (in service, never verified) is replaced and not kept; ${layout.previousUrn} keeps ${keptUrn}, ` +
    `the last verified identity. Remove ${droppedUrn} in Datadog if it is not used elsewhere`
  );
}
