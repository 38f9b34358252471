import { type AgentFlavor, detectPlatform, healthCheckOnce, type HealthCheckInput } from '../../src/enrollment/index.js';
import type { ClusterTarget } from '../../src/kube/cluster-connection.js';
import { type IdentityWatch, type WatchIdentityOptions, watchIdentity } from '../../src/reload/index.js';
import { VERSION } from '../../src/version.js';

// A replica that proves hot reload: it follows the identity Secret with the watcher library and
// sends a signed-JWT health check to the enrollment emulator every `intervalMs`, signing each call
// with whatever identity is current, and counts every call the server did not accept.

interface DemoRunnerOptions {
  /** A connection of the replica's own (clusterTargetFromConfig), as a runner in its own process has. */
  connect: () => ClusterTarget;
  namespace: string;
  name: string;
  /** Base URL of the enrollment emulator (its health-check endpoint verifies the JWT). */
  enrollmentUrl: string;
  /** Time between the starts of two calls; default 50 ms. */
  intervalMs?: number;
  /** Per-call timeout; default 2000 ms. */
  callTimeoutMs?: number;
  flavor?: AgentFlavor;
  /** Passed on to watchIdentity (re-list interval, retry policy, splay). */
  watch?: Partial<Omit<WatchIdentityOptions, 'connection' | 'namespace' | 'name'>>;
}

interface DemoCallFailure {
  at: number;
  fingerprint: string;
  status?: number;
  reason: string;
}

export interface DemoRunnerStats {
  sent: number;
  ok: number;
  failed: number;
  /** Ticks without an identity yet (no call sent). */
  waiting: number;
  /** Accepted calls per identity fingerprint, in the order identities were first used. */
  okByFingerprint: Record<string, number>;
  /** Epoch ms of the first call signed with each fingerprint. */
  firstUseByFingerprint: Record<string, number>;
  /** The last failures (at most 20), for the report. */
  failures: DemoCallFailure[];
}

export interface DemoRunner {
  readonly watch: IdentityWatch;
  stats(): DemoRunnerStats;
  /** Stops calling, waits for the call in flight, stops the watcher. */
  stop(): Promise<DemoRunnerStats>;
}

export function startDemoRunner(options: DemoRunnerOptions): DemoRunner {
  const intervalMs = options.intervalMs ?? 50;
  const timeoutMs = options.callTimeoutMs ?? 2000;
  const watch = watchIdentity({ ...options.watch, connection: options.connect(), namespace: options.namespace, name: options.name });
  const stats: DemoRunnerStats = { sent: 0, ok: 0, failed: 0, waiting: 0, okByFingerprint: {}, firstUseByFingerprint: {}, failures: [] };
  const base: Omit<HealthCheckInput, 'identity'> = {
    baseUrl: options.enrollmentUrl.replace(/\/+$/, ''),
    version: VERSION,
    flavor: options.flavor ?? 'cluster_agent',
    platform: detectPlatform(process.env),
    extraHeaders: {},
  };
  const stopping = new AbortController();

  const fail = (fingerprint: string, reason: string, status?: number) => {
    stats.failed++;
    stats.failures.push({ at: Date.now(), fingerprint, reason, ...(status === undefined ? {} : { status }) });
    if (stats.failures.length > 20) stats.failures.shift();
  };

  const callOnce = async (): Promise<void> => {
    const identity = watch.current();
    if (!identity) {
      stats.waiting++;
      return;
    }
    const fingerprint = identity.key.kid;
    stats.firstUseByFingerprint[fingerprint] ??= Date.now();
    stats.sent++;
    try {
      const res = await healthCheckOnce({ ...base, identity }, new Date(), timeoutMs);
      if (res.status === 200) {
        stats.ok++;
        stats.okByFingerprint[fingerprint] = (stats.okByFingerprint[fingerprint] ?? 0) + 1;
      } else {
        fail(fingerprint, `HTTP ${res.status}`, res.status);
      }
    } catch (err) {
      fail(fingerprint, err instanceof Error ? err.message : String(err));
    }
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      const started = Date.now();
      await callOnce();
      const wait = Math.max(0, intervalMs - (Date.now() - started));
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          stopping.signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, wait);
        stopping.signal.addEventListener('abort', done, { once: true });
      });
    }
  })();

  const snapshot = (): DemoRunnerStats => structuredClone(stats);
  return {
    watch,
    stats: snapshot,
    async stop() {
      stopping.abort();
      await loop;
      await watch.stop();
      return snapshot();
    },
  };
}

/** N replicas of the demo runner, as a Deployment would run them. */
export function startDemoReplicas(count: number, options: DemoRunnerOptions): DemoRunner[] {
  return Array.from({ length: count }, () => startDemoRunner(options));
}
