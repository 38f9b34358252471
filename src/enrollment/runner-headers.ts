import { existsSync } from 'node:fs';
import { arch, platform } from 'node:os';
import type { AgentFlavor } from './enrollment-request.js';

// Runtime headers of docs/protocol.md §7, with Go's GOOS/GOARCH spellings since the server sees the Go agent's.

const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm', s390x: 's390x', ppc64: 'ppc64le' };

export interface RunnerPlatform {
  platform: string;
  architecture: string;
  containerized: boolean;
}

export function detectPlatform(env: NodeJS.ProcessEnv): RunnerPlatform {
  return {
    platform: platform(),
    architecture: GOARCH[arch()] ?? arch(),
    containerized: Boolean(env.KUBERNETES_SERVICE_HOST) || existsSync('/.dockerenv') || existsSync('/run/.containerenv'),
  };
}

export function runtimeHeaders(version: string, flavor: AgentFlavor, where: RunnerPlatform): Record<string, string> {
  return {
    'X-Datadog-OnPrem-Version': version,
    'X-Datadog-OnPrem-Modes': 'pull',
    'X-Datadog-OnPrem-Flavor': flavor,
    'X-Datadog-OnPrem-Platform': where.platform,
    'X-Datadog-OnPrem-Architecture': where.architecture,
    'X-Datadog-OnPrem-Containerized': String(where.containerized),
  };
}
