import type { KindRegistry } from '../kinds.js';
import type { DeleteOptions } from '../registry.js';
import type { ChangeEvent, KubeObject } from '../types.js';
import type { ClusterSimulation } from './index.js';

/**
 * What the simulated controllers need from the emulator: its direct store methods. Declared here,
 * not imported from ../index.ts, so the emulator depends on the simulation and never the reverse
 * (KubeEmulator satisfies this interface structurally).
 */
export interface EmulatorStoreAccess {
  createObject(obj: KubeObject): KubeObject;
  getObject(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
  updateObject(obj: KubeObject): KubeObject;
  deleteObject(apiVersion: string, kind: string, namespace: string | undefined, name: string, opts?: DeleteOptions): void;
  listObjects(apiVersion: string, kind: string, namespace?: string): KubeObject[];
  onChange(listener: (event: ChangeEvent) => void): () => void;
  readonly resourceVersion: string;
  kinds: KindRegistry;
  simulation: ClusterSimulation | undefined;
}
