import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv } from '../e2e/run-cli.js';
import { NO_HOST_ROOT } from '../setup/no-host-services.js';

// The guard that keeps the suite off the machine's own docker daemon, kubelet, ECS config and DMI
// (issue 14): the setup file, the e2e environment and the demo/bench scripts.

const saved: Record<string, string | undefined> = {};
function setParent(name: string, value: string) {
  if (!(name in saved)) saved[name] = process.env[name];
  process.env[name] = value;
}
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
    delete saved[name];
  }
});

describe('no docker daemon, kubelet, ECS or DMI of the machine in tests', () => {
  it('the setup file points the host files at a directory that does not exist and drops DOCKER_*', () => {
    expect(process.env.PAR_IDENTITY_HOST_ROOT).toBe(NO_HOST_ROOT);
    expect(existsSync(NO_HOST_ROOT)).toBe(false);
    expect(Object.keys(process.env).filter((k) => k.startsWith('DOCKER_'))).toEqual([]);
  });

  it("cleanEnv drops the caller's docker, Kubernetes and ECS variables, and keeps the host root unless a test sets its own", () => {
    setParent('DOCKER_HOST', 'tcp://10.1.2.3:2375');
    setParent('DOCKER_DD_AGENT', 'true');
    setParent('KUBERNETES', 'yes');
    setParent('KUBERNETES_SERVICE_PORT', '443');
    setParent('ECS_CONTAINER_METADATA_URI_V4', 'http://169.254.170.2/v4/x');
    setParent('AWS_EXECUTION_ENV', 'AWS_ECS_EC2');
    const env = cleanEnv();
    for (const name of Object.keys(saved)) expect(env[name], name).toBeUndefined();
    expect(env.PAR_IDENTITY_HOST_ROOT).toBe(NO_HOST_ROOT);
    expect(cleanEnv({ PAR_IDENTITY_HOST_ROOT: '/tmp/x', DOCKER_HOST: 'unix:///tmp/x/docker.sock' })).toMatchObject({
      PAR_IDENTITY_HOST_ROOT: '/tmp/x',
      DOCKER_HOST: 'unix:///tmp/x/docker.sock',
    });
  });

  it.each(['scripts/demo.mjs', 'scripts/demo-watch.mjs', 'scripts/bench.mjs', 'scripts/bench-watch.mjs'])(
    '%s runs the binary as not containerized (no container provider)',
    async (script) => {
      const text = await readFile(new URL(`../../${script}`, import.meta.url), 'utf8');
      expect(text).toMatch(/DOCKER_DD_AGENT(: | = )''/);
    },
  );
});
