export { removeStaleTemps, replaceFileAtomically, type WriteResult } from './atomic-write.js';
export { backupPathOf, type IdentityFileState, preflightIdentityDirectory, readIdentityFile } from './identity-file.js';
