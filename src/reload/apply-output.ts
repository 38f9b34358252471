import { type DecodedIdentity, serializeIdentityFile } from '../identity/index.js';
import { replaceFileAtomically, type WriteResult } from '../storage/atomic-write.js';

// `watch --output PATH`: the identity file a runner process reads (e.g. from a shared emptyDir),
// written with the same rules as rotate-identity: docs/protocol.md §5 bytes, 0600, temp + fsync + rename,
// the previous identity kept as PATH.bak.

export function writeIdentityOutput(path: string, identity: DecodedIdentity): Promise<WriteResult> {
  return replaceFileAtomically(path, serializeIdentityFile(identity.record), { keepBackup: true });
}
