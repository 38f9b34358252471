import { rollout, watch } from './cluster-commands.js';
import { rollback, status } from './inspection-commands.js';
import { rotateIdentity, rotateParIdentity } from './rotation-commands.js';
import { completionCommand, version } from './program-commands.js';
import type { ProgramSpec } from './spec.js';
import { credentials, emulator } from './tool-commands.js';

// The one command table: commander's program (src/cli/program.ts), the man page
// (src/cli/docs/man-page.ts) and the shell completion (src/cli/docs/completion.ts) all read it.

const completion = completionCommand(() => PROGRAM);

export const PROGRAM: ProgramSpec = {
  name: 'par-identity',
  description: 'Rotate the identity (ECDSA P-256 key + runner URN) of a Datadog Private Action Runner, safely.',
  commands: [rotateIdentity, rotateParIdentity, status, rollback, credentials, rollout, completion, emulator, watch, version],
};
