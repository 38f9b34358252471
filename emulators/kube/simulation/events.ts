import { randomBytes } from 'node:crypto';
import type { EmulatorStoreAccess } from './store-access.js';
import type { KubeObject } from '../types.js';
import { nowTimestamp } from './objects.js';

/**
 * core/v1 Events as client-go's recorder writes them: one object per (object, reason, message),
 * whose count and lastTimestamp grow when the same event repeats.
 */
export class EventRecorder {
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly emu: EmulatorStoreAccess,
    private readonly enabled: boolean,
  ) {}

  record(involved: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string, component: string, host?: string): void {
    if (!this.enabled) return;
    const namespace = involved.metadata.namespace ?? 'default';
    const key = `${involved.metadata.uid}|${reason}|${message}|${component}`;
    const now = nowTimestamp();
    try {
      const existingName = this.seen.get(key);
      const existing = existingName ? this.emu.getObject('v1', 'Event', namespace, existingName) : undefined;
      if (existing) {
        this.emu.updateObject({ ...existing, count: Number(existing['count'] ?? 1) + 1, lastTimestamp: now });
        return;
      }
      const name = `${involved.metadata.name}.${randomBytes(8).toString('hex')}`;
      this.emu.createObject({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          kind: involved.kind,
          namespace: involved.metadata.namespace,
          name: involved.metadata.name,
          uid: involved.metadata.uid,
          apiVersion: involved.apiVersion,
          resourceVersion: involved.metadata.resourceVersion,
        },
        reason,
        message,
        source: host ? { component, host } : { component },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: component,
        reportingInstance: host ?? '',
      });
      this.seen.set(key, name);
    } catch {
      // Events are best effort, as in client-go (a missing namespace drops them).
    }
  }
}
