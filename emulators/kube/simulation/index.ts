import type { EmulatorStoreAccess } from './store-access.js';
import type { SimContext } from './context.js';
import { DaemonSetController } from './daemonset-controller.js';
import { DeploymentController } from './deployment-controller.js';
import { EventRecorder } from './events.js';
import { GarbageCollector } from './garbage-collector.js';
import { JobController } from './job-controller.js';
import { Kubelet } from './kubelet.js';
import { ReconcileLoop } from './loop.js';
import { buildNode, NodeLifecycle, nodeCondition } from './nodes.js';
import { ReplicaSetController } from './replicaset-controller.js';
import { Scheduler } from './scheduler.js';
import { ObjectTracker } from './tracker.js';
import type { ClusterSimulation, ClusterSimulationOptions, NodeObject, WaitOptions } from './types.js';

export { CONTROLLER_REVISION_HASH_LABEL } from './daemonset-controller.js';
export { POD_TEMPLATE_HASH_LABEL } from './deployment-controller.js';
export type {
  ClusterSimulation,
  ClusterSimulationOptions,
  Pod,
  SimNodeSpec,
} from './types.js';

/**
 * Starts a kwok-like cluster inside a Kubernetes API emulator: Nodes, a scheduler, one kubelet
 * per node, and the node lifecycle, Deployment, ReplicaSet, DaemonSet, Job and garbage collector
 * controllers. Every effect is an ordinary write to the emulator's store, so API clients and
 * kubectl list and watch it as they would a cluster.
 */
export function startClusterSimulation(emu: EmulatorStoreAccess, options: ClusterSimulationOptions = {}): ClusterSimulation {
  const secondMs = options.secondMs ?? 1000;
  const tracker = new ObjectTracker();
  const onError = options.onError ?? ((e: unknown) => console.error('cluster simulation:', e));
  let loop: ReconcileLoop | undefined;
  const ctx: SimContext = {
    emu,
    options,
    secondMs,
    tracker,
    events: new EventRecorder(emu, options.events !== false),
    podBehavior: options.kubelet?.podBehavior,
    wakeAt: (ms) => loop?.wakeAt(ms),
  };
  // One pass, in this order: node taints, garbage, controllers (Deployments feed ReplicaSets), scheduler, kubelets.
  const components: Array<[keyof NonNullable<ClusterSimulationOptions['controllers']>, { sync(): void }]> = [
    ['nodeLifecycle', new NodeLifecycle(ctx)],
    ['garbageCollector', new GarbageCollector(ctx)],
    ['deployments', new DeploymentController(ctx)],
    ['replicaSets', new ReplicaSetController(ctx)],
    ['daemonSets', new DaemonSetController(ctx)],
    ['jobs', new JobController(ctx)],
    ['scheduler', new Scheduler(ctx)],
    ['kubelet', new Kubelet(ctx)],
  ];
  const steps = components.filter(([name]) => options.controllers?.[name] !== false).map(([, c]) => () => c.sync());
  const activeLoop = new ReconcileLoop(steps, () => emu.resourceVersion, onError, options.tickMs ?? 1000);
  loop = activeLoop;
  const unsubscribe = emu.onChange((e) => {
    tracker.observe(e);
    if (e.kindKey !== 'v1/Event') activeLoop.kick();
  });
  let stopped = false;

  const node = (name: string): NodeObject => {
    const n = emu.getObject('v1', 'Node', undefined, name) as NodeObject | undefined;
    if (!n) throw new Error(`no node named ${name}`);
    return n;
  };

  const sim: ClusterSimulation = {
    secondMs,
    get stopped() {
      return stopped;
    },
    addNode(spec) {
      const created = emu.createObject(buildNode(spec));
      activeLoop.kick();
      return created;
    },
    updateNode(name, mutate) {
      const next = structuredClone(node(name));
      mutate(next);
      return emu.updateObject(next);
    },
    setNodeCondition(name, type, status, reason, message) {
      return sim.updateNode(name, (n) => {
        const conditions = n.status?.conditions ?? [];
        const cond = nodeCondition(type, status, reason, message);
        const i = conditions.findIndex((c) => c.type === type);
        if (i >= 0 && conditions[i]!.status === status) cond.lastTransitionTime = conditions[i]!.lastTransitionTime;
        const next = [...conditions];
        if (i >= 0) next[i] = cond;
        else next.push(cond);
        n.status = { ...(n.status ?? {}), conditions: next };
      });
    },
    cordon(name, unschedulable = true) {
      return sim.updateNode(name, (n) => {
        n.spec = { ...(n.spec ?? {}) };
        if (unschedulable) n.spec.unschedulable = true;
        else delete n.spec.unschedulable;
      });
    },
    removeNode(name) {
      emu.deleteObject('v1', 'Node', undefined, name);
    },
    setPodBehavior(fn) {
      ctx.podBehavior = fn;
      activeLoop.kick();
    },
    async settle() {
      for (let i = 0; i < 100; i++) {
        const before = emu.resourceVersion;
        activeLoop.runUntilStable();
        await new Promise((resolve) => setImmediate(resolve));
        if (emu.resourceVersion === before) return;
      }
    },
    waitFor<T>(check: () => T | undefined | null | false, opts: WaitOptions = {}): Promise<T> {
      const timeoutMs = opts.timeoutMs ?? 5000;
      return new Promise<T>((resolve, reject) => {
        let done = false;
        const cleanups: Array<() => void> = [];
        const finish = (fn: () => void): void => {
          if (done) return;
          done = true;
          for (const c of cleanups) c();
          fn();
        };
        const evaluate = (): void => {
          if (done) return;
          try {
            const v = check();
            if (v) finish(() => resolve(v));
          } catch (e) {
            finish(() => reject(e));
          }
        };
        let pending: NodeJS.Immediate | undefined;
        const soon = (): void => {
          pending ??= setImmediate(() => {
            pending = undefined;
            evaluate();
          });
        };
        cleanups.push(emu.onChange(soon));
        cleanups.push(activeLoop.onPass(soon));
        cleanups.push(() => pending && clearImmediate(pending));
        const timer = setTimeout(() => {
          finish(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'a condition'}`)));
        }, timeoutMs);
        cleanups.push(() => clearTimeout(timer));
        evaluate();
      });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe();
      activeLoop.stop();
    },
  };

  for (const spec of options.nodes ?? []) emu.createObject(buildNode(spec));
  // Attached to its emulator, so that close() stops it too.
  emu.simulation ??= sim;
  activeLoop.kick();
  return sim;
}
