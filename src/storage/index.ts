export { replaceFileAtomically, swapIntoService, sweepInterruptedWrites, writePrivateFile } from './atomic-write.js';
export { backupPathOf, type IdentityFileState, preflightIdentityDirectory, readIdentityFile } from './identity-file.js';
export { acquireIdentityLock, liveLockHolder, lockPathOf } from './lock.js';
export { type Leftover, listLeftovers } from './leftovers.js';
export { listRecoverableIdentities } from './recovery-files.js';
export { previousToKeep } from './previous-identity.js';
export { parseVerifiedRecord, readVerifiedRecord, writeVerifiedRecord } from './verified-record.js';
