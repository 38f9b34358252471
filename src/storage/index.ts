export { removeStaleTemps, replaceFileAtomically, type WriteResult } from './atomic-write.js';
export { backupPathOf, type IdentityFileState, preflightIdentityDirectory, readIdentityFile } from './identity-file.js';
export { type AcquireLockOptions, acquireIdentityLock, type IdentityLock, type LockClock, type LockHolder, lockPathOf } from './lock.js';
