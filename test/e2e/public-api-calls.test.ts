import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ConfigError,
  InterruptedError,
  ParError,
  type RotatedResult,
  rotateIdentity,
  rotateParIdentity,
  status,
  watchIdentity,
} from '../../src/api.js';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY, type EnrollmentEmulator, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import type { KubeEmulator, KubeObject } from '../../emulators/kube/index.js';
import { FINGERPRINT_ANNOTATION } from '../../src/rollout/index.js';
import { CLOSED_METADATA_URL } from '../setup/no-cloud-metadata.js';
import { clusterWithRunner } from './runner-cluster.js';
import { eventually } from './watch-fixture.js';

// The API called in-process (the sources, not the package: test/e2e/public-api.test.ts covers the
// installed tarball) against the Kubernetes emulator with stored rollouts (runner-cluster.ts) and the enrollment
// emulator: what a library must not do to its host process is checked around each call.

const NS = 'datadog';
const SECRET = 'private-action-runner-identity';

let dir: string;
let kube: KubeEmulator;
let enrollment: EnrollmentEmulator;
let kubeconfig: string;

const annotations = () =>
  ((
    kube.getObject('apps/v1', 'Deployment', NS, 'par') as KubeObject & {
      spec: { template: { metadata: { annotations?: Record<string, string> } } };
    }
  ).spec.template.metadata.annotations ?? {}) as Record<string, string>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'par-api-calls-'));
  enrollment = await startEnrollmentEmulator();
  // The cluster agent runs with the settings of the config below (the Helm layout): the -c agrees with it.
  kube = await clusterWithRunner(['default', NS], NS, { enrollmentUrl: enrollment.url, env: [{ name: 'DD_CLUSTER_NAME', value: 'e2e' }] });
  kubeconfig = join(dir, 'kubeconfig');
  await kube.writeKubeconfig(kubeconfig, { token: kube.adminToken, namespace: NS });
  await writeFile(
    join(dir, 'datadog-cluster.yaml'),
    [
      `dd_url: ${enrollment.url}`,
      'cluster_name: e2e',
      `kube_resources_namespace: ${NS}`,
      'private_action_runner:',
      '  enabled: true',
      '',
    ].join('\n'),
  );
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all([enrollment.close(), kube.close()]);
  await rm(dir, { recursive: true, force: true });
});

/** An environment of its own, as a caller may pass: nothing of this process's DD_* or KUBECONFIG. */
const env = () => ({
  HOME: dir,
  DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true',
  PAR_IDENTITY_RETRY_INITIAL_MS: '20',
  PAR_IDENTITY_ROLLOUT_POLL_MS: '30',
  PAR_IDENTITY_CLOUD_METADATA_URL: CLOSED_METADATA_URL,
});
const cluster = () => ({ cfgPath: dir, kubeconfig, env: env() });
const keys = { apiKey: DEFAULT_API_KEY, appKey: DEFAULT_APP_KEY };

/** Runs `call` and reports what it did to the process: signal handlers, output, exit code, environment. */
async function hostEffects<T>(
  call: () => Promise<T>,
): Promise<{ value?: T; error?: unknown; signalHandlers: string[]; writes: number; exitCode: unknown; envChanged: boolean }> {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2'];
  const handlers = [
    vi.spyOn(process, 'on'),
    vi.spyOn(process, 'once'),
    vi.spyOn(process, 'addListener'),
    vi.spyOn(process, 'prependListener'),
  ];
  const writes = [vi.spyOn(process.stdout, 'write'), vi.spyOn(process.stderr, 'write')];
  const envBefore = JSON.stringify(process.env);
  process.exitCode = undefined;
  let value: T | undefined;
  let error: unknown;
  try {
    value = await call();
  } catch (err) {
    error = err;
  }
  const signalHandlers = handlers.flatMap((spy) => spy.mock.calls.map((c) => String(c[0]))).filter((name) => signals.includes(name));
  const effects = {
    value,
    error,
    signalHandlers,
    writes: writes.reduce((n, spy) => n + spy.mock.calls.length, 0),
    exitCode: process.exitCode,
    envChanged: JSON.stringify(process.env) !== envBefore,
  };
  for (const spy of [...handlers, ...writes]) spy.mockRestore();
  return effects;
}

describe('rotateParIdentity and status', () => {
  it('rotate, roll out, then status: results as --json, and nothing done to the host process', async () => {
    const rotated = await hostEffects(() => rotateParIdentity({ ...cluster(), ...keys, rollout: 'deployment/par' }));
    expect(rotated.error).toBeUndefined();
    expect(rotated).toMatchObject({ signalHandlers: [], writes: 0, exitCode: undefined, envChanged: false });
    expect(rotated.value).toMatchObject({
      schemaVersion: 1,
      status: 'ok',
      command: 'rotate-par-identity',
      namespace: NS,
      secretName: SECRET,
      action: 'created',
      verify: { performed: true, ok: true },
      rollout: { action: 'rolled-out', previousRunnerSafeToRemove: true },
    });
    expect(annotations()[FINGERPRINT_ANNOTATION]).toBe((rotated.value as RotatedResult).fingerprint);

    const shown = await hostEffects(() => status({ ...cluster(), secret: true, verify: true }));
    expect(shown).toMatchObject({ signalHandlers: [], writes: 0, exitCode: undefined, envChanged: false });
    expect(shown.value).toMatchObject({
      command: 'status',
      target: 'cluster-secret',
      urn: (rotated.value as RotatedResult).urn,
      fingerprint: (rotated.value as RotatedResult).fingerprint,
      previous: null,
      verify: { performed: true, ok: true },
    });
  });

  it('an abort during the rollout undoes the restart and rejects with INTERRUPTED; the new identity is stored', async () => {
    const controller = new AbortController();
    const effects = await hostEffects(() =>
      rotateParIdentity({
        ...cluster(),
        ...keys,
        rollout: 'deployment/par',
        signal: controller.signal,
        onProgress: (p) => {
          if (p.level === 'step' && p.message === 'roll out') controller.abort();
        },
      }),
    );
    expect(effects).toMatchObject({ signalHandlers: [], writes: 0 });
    expect(effects.error).toBeInstanceOf(InterruptedError);
    expect(effects.error).toMatchObject({ code: 'INTERRUPTED', exitCode: 130 });
    expect(annotations()[FINGERPRINT_ANNOTATION]).toBeUndefined();
    expect(kube.getObject('v1', 'Secret', NS, SECRET)).toBeDefined();
  });

  it('status of a Secret that is not there: KubernetesError SECRET_MISSING, an instance of ParError', async () => {
    const err = await status({ ...cluster(), secret: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParError);
    expect(err).toMatchObject({ name: 'ParError', code: 'SECRET_MISSING', exitCode: 9, hint: expect.any(String) });
  });
});

describe('rotateIdentity', () => {
  it('the file target: rotated, verified, and nothing done to the host process but the lock file exit hook', async () => {
    const node = await mkdtemp(join(dir, 'node-'));
    await writeFile(
      join(node, 'datadog.yaml'),
      [`dd_url: ${enrollment.url}`, 'hostname: e2e-host', 'private_action_runner:', '  enabled: true', ''].join('\n'),
    );
    const effects = await hostEffects(() => rotateIdentity({ cfgPath: node, env: env(), ...keys }));
    expect(effects.error).toBeUndefined();
    expect(effects).toMatchObject({ signalHandlers: [], writes: 0, exitCode: undefined, envChanged: false });
    expect(effects.value).toMatchObject({
      command: 'rotate-identity',
      identityFile: join(node, 'privateactionrunner_private_identity.json'),
      verify: { performed: true, ok: true },
    });
  });
});

describe('watchIdentity', () => {
  it('refuses a config that does not keep the identity in a Secret: ConfigError WATCH_DISABLED', async () => {
    await writeFile(join(dir, 'datadog-cluster.yaml'), 'private_action_runner:\n  enabled: false\n');
    const err = await watchIdentity(cluster()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ code: 'WATCH_DISABLED' });
    expect(kube.openWatches).toBe(0);
  });

  it('stopped before any identity: ready rejects with INTERRUPTED, the watch is closed, no signal handlers', async () => {
    const events: string[] = [];
    const effects = await hostEffects(async () => {
      const w = await watchIdentity({ ...cluster(), onEvent: (e) => events.push(e.type) });
      await eventually(() => expect(events).toContain('missing'));
      expect(w.current()).toBeUndefined();
      const summary = await w.stop();
      await expect(w.ready).rejects.toMatchObject({ code: 'INTERRUPTED' });
      return summary;
    });
    expect(effects).toMatchObject({ signalHandlers: [], writes: 0, exitCode: undefined, envChanged: false });
    expect(effects.value).toEqual({
      secret: { namespace: NS, name: SECRET },
      reloads: 0,
      reloadErrors: 0,
      watchRestarts: 0,
      stoppedBy: 'stop',
    });
    await eventually(() => expect(kube.openWatches).toBe(0));
  });

  it('await using stops the watch at the end of the block', async () => {
    await rotateParIdentity({ ...cluster(), ...keys });
    let fingerprint: string | undefined;
    {
      await using w = await watchIdentity(cluster());
      fingerprint = (await w.ready).fingerprint;
      await eventually(() => expect(kube.openWatches).toBe(1));
      expect(w.metricsText()).toContain(`par_identity_info{namespace="${NS}",secret="${SECRET}",fingerprint="${fingerprint}"`);
    }
    await eventually(() => expect(kube.openWatches).toBe(0));
    expect(fingerprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
