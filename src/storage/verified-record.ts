import { replaceFileAtomically } from './atomic-write.js';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { readOwnedNoFollow } from './file-primitives.js';
import { isRfc3339 } from '../time/index.js';

// `<identity>.verified`: which identity last passed the signed health check (docs/identity-lifecycle.md §1).
// It holds a fingerprint, a URN and a time, never key material; the agent reads only its identity
// file, so a file beside it is invisible to it.

interface VerifiedRecord {
  /** The JWK thumbprint (kid) of the identity that passed. */
  fingerprint: string;
  urn: string;
  verifiedAt: string;
  /** The fingerprint of an identity this tool put in service after that one and that has not passed (yet). */
  unverified?: string;
  /** The runner name it was enrolled with, when this tool enrolled it (a later rotation names the runner it replaces). */
  runnerName?: string;
}

const RUNNER_NAME = /^[\w.:-]{1,200}$/;
const FINGERPRINT = /^[A-Za-z0-9_-]{16,128}$/;
const URN = /^urn:dd:apps:on-prem-runner:[A-Za-z0-9._:-]{1,200}$/;

function verifiedPathOf(path: string): string {
  return `${path}.verified`;
}

/** Only a record of the exact shape the tool writes counts; anything else is as if absent. */
export function parseVerifiedRecord(value: unknown): VerifiedRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { fingerprint, urn, verifiedAt, unverified, runnerName } = value as Record<string, unknown>;
  if (typeof fingerprint !== 'string' || !FINGERPRINT.test(fingerprint)) return undefined;
  if (typeof urn !== 'string' || !URN.test(urn)) return undefined;
  if (typeof verifiedAt !== 'string' || !isRfc3339(verifiedAt)) return undefined;
  if (unverified !== undefined && (typeof unverified !== 'string' || !FINGERPRINT.test(unverified))) return undefined;
  // A name of another shape is dropped, not the mark: it only labels a message.
  const name = typeof runnerName === 'string' && RUNNER_NAME.test(runnerName) ? { runnerName } : {};
  return { fingerprint, urn, verifiedAt, ...(unverified ? { unverified } : {}), ...name };
}

/**
 * The mark beside the identity file; undefined when there is none that counts. The mark decides which
 * identity a rotation keeps as the previous one (docs/identity-lifecycle.md §2), so one that belongs to
 * anyone but root, this user or the directory's owner (who alone write it) is not believed: planted in
 * a directory others may write, it could have the identity in service replaced without being kept.
 * That case returns why, for the run to warn.
 */
export async function readVerifiedRecord(path: string): Promise<VerifiedRecord | { refused: string } | undefined> {
  const file = verifiedPathOf(path);
  const read = await readOwnedNoFollow(file).catch(() => undefined);
  if (!read || read.content.length > 4096) return undefined;
  const dirOwner = (await stat(dirname(file)).catch(() => undefined))?.uid;
  if (![0, process.geteuid?.() ?? 0, dirOwner].includes(read.uid)) {
    return {
      refused:
        `${file} belongs to uid ${read.uid}, not to root, this user or the owner of its directory, ` +
        'so it is not believed (it may have been planted): which identity last passed verification is taken as unknown. ' +
        'Remove it if it is not yours',
    };
  }
  try {
    return parseVerifiedRecord(JSON.parse(read.content.toString('utf8')));
  } catch {
    return undefined;
  }
}

export async function writeVerifiedRecord(path: string, record: VerifiedRecord): Promise<void> {
  await replaceFileAtomically(verifiedPathOf(path), `${JSON.stringify(record)}\n`, { keepBackup: false });
}
