import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { type KubeEmulator, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';
import { type ClusterTarget, clusterTargetFromConfig } from '../../src/kube/cluster-connection.js';
import { parseKubeconfig } from '../../src/kube/kubeconfig.js';
import type { IdentityWatch, WatchEvent } from '../../src/reload/index.js';
import { beforeEach } from 'vitest';

export { identityData, newIdentity, ORG_ID, secretData, type TestIdentity } from '../fixtures/test-identities.js';

// A Kubernetes API emulator holding one identity Secret, fresh identities to rotate to, and ways
// to wait for what watchers report — polling the event loop, never sleeping a fixed time.

export const NAMESPACE = 'datadog';
export const SECRET = 'private-action-runner-identity';
export interface KubeFixture {
  emu: KubeEmulator;
  /** A connection of its own to the emulator (as the admin, or as `token`), through par-identity's transport. */
  connection(token?: string): ClusterTarget;
  create(data: Record<string, string>): void;
  /** Replaces the Secret's data (or labels), like `rotate-par-identity` does. */
  update(data: Record<string, string>, labels?: Record<string, string>): void;
  remove(): void;
  requests(verb: string): KubeEmulator['requests'];
  close(): Promise<void>;
}

export async function kubeFixture(options: { bookmarkIntervalMs?: number } = {}): Promise<KubeFixture> {
  const emu = await startKubeEmulator(options);
  // Every cluster has default (the cluster-id ConfigMap lives there when no service account says otherwise).
  seedNamespaces(emu, ['default', NAMESPACE]);
  const config = await parseKubeconfig(emu.kubeconfig({ namespace: NAMESPACE }), '/');
  return {
    emu,
    connection(token) {
      const users = token ? config.users.map((u) => ({ ...u, token })) : config.users;
      return clusterTargetFromConfig({ ...config, users }, { env: {}, source: 'the emulator kubeconfig' });
    },
    create(data) {
      emu.createObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: SECRET, namespace: NAMESPACE }, type: 'Opaque', data });
    },
    update(data, labels) {
      const cur = emu.getObject('v1', 'Secret', NAMESPACE, SECRET)!;
      emu.updateObject({ ...cur, metadata: { ...cur.metadata, ...(labels ? { labels } : {}) }, data });
    },
    remove() {
      emu.deleteObject('v1', 'Secret', NAMESPACE, SECRET);
    },
    requests: (verb) => emu.requests.filter((r) => r.verb === verb && r.resource === 'secrets'),
    close: () => emu.close(),
  };
}

/**
 * How long a test that starts the built binary waits for one thing it does (its first write, a
 * signal, a line): long enough for a loaded 2-core machine (several suites at once, where starting
 * Node alone can take seconds), and it is only ever waited in full when the test fails anyway.
 */
export const BINARY_WAIT_MS = 30_000;

/**
 * When the running test times out, less a margin: no wait of `eventually` goes past it, so a wait
 * that fails is reported inside its test, never as an error thrown after the test ended.
 */
let testEndsAt = Number.POSITIVE_INFINITY;
beforeEach((context) => {
  const timeout = (context.task as { timeout?: number }).timeout;
  testEndsAt = timeout && timeout > 0 ? Date.now() + timeout - 1_000 : Number.POSITIVE_INFINITY;
});

/** Resolves when `check` (sync or async) passes, polling on the event loop; never past the test's own timeout. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5000): Promise<T> {
  const deadline = Math.min(Date.now() + timeoutMs, testEndsAt);
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

/** Kills every process still running and waits for each to be gone, so nothing of a test outlives it. */
export async function stopProcesses(children: Array<ChildProcess>): Promise<void> {
  await Promise.all(
    children.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit').catch(() => undefined);
      child.kill('SIGKILL');
      await gone;
    }),
  );
}

/** Every event a watcher emits, from now on. */
export function recordEvents(watch: IdentityWatch): WatchEvent[] {
  const events: WatchEvent[] = [];
  watch.events.on('event', (e) => events.push(e));
  return events;
}

export function ofType<T extends WatchEvent['type']>(events: WatchEvent[], type: T): Extract<WatchEvent, { type: T }>[] {
  return events.filter((e): e is Extract<WatchEvent, { type: T }> => e.type === type);
}
