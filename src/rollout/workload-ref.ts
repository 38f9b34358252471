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
    throw new UsageError(
      `the workload must be deployment/<name> or daemonset/<name>, got a ${text.length}-character value`,
      'Use deployment/<name> or daemonset/<name> (also deploy/ and ds/).',
    );
  }
  return { kind, name, namespace };
}

export function describeRef(ref: WorkloadRef): string {
  return `${ref.kind}/${ref.name} in ${ref.namespace}`;
}
