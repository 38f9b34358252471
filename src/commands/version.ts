import type { VersionOptions } from '../cli/program-commands.js';
import type { Io } from '../io.js';
import { type CommandResult, resultJson } from '../output.js';
import { runningAsSingleExecutable } from '../single-executable.js';
import { COMMIT, VERSION } from '../version.js';

// `par-identity version`: what a bug report needs, in one place (issue 25). Made by the tool only,
// so nothing here needs the sanitizer.

interface BuildInfo {
  version: string;
  commit: string;
  node: string;
  platform: string;
  arch: string;
  singleExecutable: boolean;
}

function buildInfo(): BuildInfo {
  return {
    version: VERSION,
    commit: COMMIT,
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    singleExecutable: runningAsSingleExecutable(),
  };
}

export async function run(_options: VersionOptions, _io: Io): Promise<CommandResult<ReturnType<typeof resultJson<'version', BuildInfo>>>> {
  const info = buildInfo();
  return {
    json: resultJson('version', info),
    summary: [
      `par-identity ${info.version}`,
      `  commit:            ${info.commit}`,
      `  node:              ${info.node}`,
      `  platform:          ${info.platform}-${info.arch}`,
      `  single executable: ${info.singleExecutable ? 'yes' : 'no (npm package)'}`,
    ],
  };
}
