import { UsageError } from '../errors.js';

export type WorkloadKind = 'deployment' | 'daemonset';

export interface WorkloadRef {
  kind: WorkloadKind;
  name: string;
  namespace: string;
}

const KINDS: Record<string, WorkloadKind> = {
  deployment: 'deployment',
  deployments: 'deployment',
  deploy: 'deployment',
  daemonset: 'daemonset',
  daemonsets: 'daemonset',
  ds: 'daemonset',
};

/** `deployment/<name>` or `daemonset/<name>`, as kubectl spells them (also deploy/ and ds/). */
export function parseWorkloadRef(text: string, namespace: string): WorkloadRef {
  const [kindText, name, extra] = text.split('/');
  const kind = kindText ? KINDS[kindText.toLowerCase()] : undefined;
  if (!kind || !name || extra !== undefined) {
    throw new UsageError(`${JSON.stringify(text)} is not a workload reference`, 'Use deployment/<name> or daemonset/<name>.');
  }
  return { kind, name, namespace };
}

export function describeRef(ref: WorkloadRef): string {
  return `${ref.kind}/${ref.name} in ${ref.namespace}`;
}
