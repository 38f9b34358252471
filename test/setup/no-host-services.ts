import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Loaded before every test file (vitest setupFiles), beside no-cloud-metadata.ts: the hostname chain
// must never talk to the docker daemon or kubelet of the machine the suite runs on, nor read its
// ECS config, DMI tables or service account. PAR_IDENTITY_HOST_ROOT points the chain's host files
// (docker sockets, /etc/ecs/ecs.config, DMI, service-account token and CA) at a directory that does
// not exist, and the variables that would name a real docker daemon, or make the agent look
// containerized, are dropped. Tests that want these set them explicitly, on loopback emulators.
export const NO_HOST_ROOT = join(tmpdir(), 'par-identity-test-no-host-root');

/** Variables of the machine that the hostname chain reads as the agent's environment. */
export function isHostEnvironmentVariable(name: string): boolean {
  return (
    /^(DOCKER_|KUBERNETES_|ECS_|AWS_CONTAINER_)/.test(name) ||
    ['KUBERNETES', 'AWS_EXECUTION_ENV', 'AUTOCONFIG_FROM_ENVIRONMENT', 'AUTCONFIG_FROM_ENVIRONMENT'].includes(name)
  );
}

process.env.PAR_IDENTITY_HOST_ROOT = NO_HOST_ROOT;
for (const name of ['DOCKER_DD_AGENT', 'DOCKER_HOST', 'DOCKER_CERT_PATH', 'DOCKER_TLS_VERIFY']) delete process.env[name];
