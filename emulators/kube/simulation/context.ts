import type { EmulatorStoreAccess } from './store-access.js';
import type { DeleteOptions } from '../registry.js';
import { isApiError } from '../status-errors.js';
import type { KubeObject } from '../types.js';
import type { EventRecorder } from './events.js';
import type { ObjectTracker } from './tracker.js';
import type { ClusterSimulationOptions, Pod, PodBehavior } from './types.js';

/** What every simulated component gets: store access that tolerates races, time, wake-ups and events. */
export interface SimContext {
  readonly emu: EmulatorStoreAccess;
  readonly options: ClusterSimulationOptions;
  readonly secondMs: number;
  readonly tracker: ObjectTracker;
  readonly events: EventRecorder;
  podBehavior: ((pod: Pod) => PodBehavior | undefined) | undefined;
  /** Asks for a reconcile pass at (or soon after) this wall-clock ms. */
  wakeAt(ms: number): void;
}

export function list<T extends KubeObject>(ctx: SimContext, apiVersion: string, kind: string, namespace?: string): T[] {
  return ctx.emu.listObjects(apiVersion, kind, namespace) as T[];
}

export function get<T extends KubeObject>(ctx: SimContext, apiVersion: string, kind: string, namespace: string | undefined, name: string): T | undefined {
  return ctx.emu.getObject(apiVersion, kind, namespace, name) as T | undefined;
}

/** Swallows the API errors a controller retries on its next sync (409 Conflict, 404 Not Found). */
function tolerated(e: unknown): boolean {
  return isApiError(e) && (e.code === 409 || e.code === 404);
}

/** Runs a write; undefined when the API answered with an error the controller retries on its next sync. */
function attempt<T>(write: () => T): T | undefined {
  try {
    return write();
  } catch (e) {
    if (tolerated(e)) return undefined;
    throw e;
  }
}

/** A guarded write (resourceVersion of the object read); undefined when someone else got there first. */
export function update<T extends KubeObject>(ctx: SimContext, obj: T): T | undefined {
  return attempt(() => ctx.emu.updateObject(obj) as T);
}

export function create<T extends KubeObject>(ctx: SimContext, obj: KubeObject): T | undefined {
  return attempt(() => ctx.emu.createObject(obj) as T);
}

/** DELETE with the object's uid as precondition, so a recreated object of the same name is never hit. */
export function remove(ctx: SimContext, obj: KubeObject, opts: Omit<DeleteOptions, 'preconditions'> = {}): boolean {
  const done = attempt(() => {
    ctx.emu.deleteObject(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name!, { ...opts, preconditions: { uid: obj.metadata.uid } });
    return true;
  });
  return done === true;
}
