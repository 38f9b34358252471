import { errorEnvelope } from './error-envelope.js';
import { ERROR_CODES, ExitCode } from './errors.js';

// The one error the launcher (bin/par-identity.js) tells itself: the Node running it is too old. Built
// into dist/launcher-error.js for any Node (scripts/build.mjs), so its exit status and --json object
// come from the table (src/errors.ts) and the one envelope builder, not from literals in the launcher.

export function nodeUnsupported(
  version: string,
  neededMajor: number,
  json: boolean,
): { exitCode: number; stdout?: string; stderr: string } {
  const message = `par-identity needs Node.js ${neededMajor} or newer; this is Node.js ${version}. Nothing was changed.`;
  const hint =
    `Put Node.js ${neededMajor}+ first on PATH, or use the single executable par-identity-linux-x64, ` +
    'which carries its own Node (built by npm run build:sea in a checkout).';
  const exitCode = ExitCode[ERROR_CODES.NODE_UNSUPPORTED.exit];
  return {
    exitCode,
    ...(json ? { stdout: `${JSON.stringify(errorEnvelope({ code: 'NODE_UNSUPPORTED', exitCode, message, hint }))}\n` } : {}),
    stderr: `error[NODE_UNSUPPORTED]: ${message} ${hint}\n`,
  };
}
