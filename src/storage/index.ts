export { removeStaleTemps, replaceFileAtomically, type SweepResult, type SwapOptions, swapIntoService, sweepInterruptedWrites, type WriteResult } from './atomic-write.js';
export { backupPathOf, type IdentityFileState, preflightIdentityDirectory, readIdentityFile, refuseSymlink } from './identity-file.js';
export { type AcquireLockOptions, acquireIdentityLock, type IdentityLock, type LockHolder, lockPathOf } from './lock.js';
export { adoptRecoveryAsBackup, keepAside, listRecoverableIdentities, type RecoverableIdentity, type RecoveryKind, utcStamp } from './recovery-files.js';
export { type IdentityKeyNames, type RotatedSecretValues, rotatedSecretValues } from './previous-identity.js';
