import type { AgentConfig } from '../config/agent-config.js';
import { MAX_HOSTNAME_LENGTH } from './hostname-validation.js';

// The `-<cluster name>` the agent appends to a Kubernetes node name (pkg/util/kubernetes/clustername,
// getClusterName; pkg/util/kubelet, GetHostname). A configured cluster_name is used as written only
// when it already is a valid name (lower case, dot-separated labels, GKE's rule) and node-cluster fits
// in 255 characters; otherwise the agent ignores it — it does NOT lower-case or fix it. Lower-casing
// and `_` → `-` apply to names it discovers itself (cloud metadata, node labels), which this tool
// does not do: it says so in a note instead.

const VALID_CLUSTER_NAME = /^([a-z]([a-z0-9-]*[a-z0-9])?\.)*([a-z]([a-z0-9-]*[a-z0-9])?)$/;

interface ClusterNameChoice {
  /** The suffix to append, or undefined for the plain node name. */
  name?: string;
  notes: string[];
}

export function clusterNameFor(config: AgentConfig, nodeName: string): ClusterNameChoice {
  const notes: string[] = [];
  const raw = config.get('cluster_name');
  let name = raw === undefined || raw === null ? '' : String(raw);
  if (name !== '') {
    if (!VALID_CLUSTER_NAME.test(name)) {
      notes.push(`cluster_name ${JSON.stringify(name)} is ignored, as by the agent: it must be lower-case dot-separated labels (letters, digits, hyphens; starting with a letter)`);
      name = '';
    } else if (`${nodeName}-${name}`.length > MAX_HOSTNAME_LENGTH) {
      notes.push(`cluster_name is ignored, as by the agent: ${nodeName}-${name} would be longer than ${MAX_HOSTNAME_LENGTH} characters`);
      name = '';
    }
  }
  if (name === '') {
    notes.push('no usable cluster_name: the agent may still append a cluster name it discovers (cloud metadata, node labels), which this tool does not; set cluster_name to be sure');
  } else if (config.getString('kubernetes_node_label_as_cluster_name')) {
    notes.push('kubernetes_node_label_as_cluster_name is set: a node label may replace cluster_name in the agent, which this tool does not read');
  }
  return name === '' ? { notes } : { name: name.replaceAll('_', '-').toLowerCase(), notes };
}
