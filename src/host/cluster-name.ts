import type { AgentConfig } from '../config/agent-config.js';
import { MAX_HOSTNAME_LENGTH } from './hostname-validation.js';

// The `-<cluster name>` the agent appends to a Kubernetes node name (docs/protocol.md §4, chain step 7).
// A configured cluster_name is used only when it passes the agent's rule and node-cluster fits in 255
// characters; otherwise the agent ignores it — it never lower-cases or fixes an invalid one. The rule
// depends on the agent's version: GKE's up to 7.77, and from 7.78 (datadog-agent #47189) a label may
// also start with a digit and hold `_` (which becomes `-` in the hostname). Names the agent discovers
// itself (cloud metadata, node labels) are not read by this tool: it says so in a note instead.

const GKE_RULE = /^([a-z]([a-z0-9-]*[a-z0-9])?\.)*([a-z]([a-z0-9-]*[a-z0-9])?)$/;
const RULE_7_78 = /^([a-z0-9]([a-z0-9_-]*[a-z0-9])?\.)*([a-z0-9]([a-z0-9_-]*[a-z0-9])?)$/;
const FIRST_WITH_7_78_RULE: [number, number] = [7, 78];

/** The agent version the rule is chosen by, and where it was found. */
export interface AgentVersionHint {
  version: string;
  source: string;
}

interface ClusterNameRule {
  pattern: RegExp;
  /** Says which rule and why, for the hostname source and --json. */
  label: string;
  demand: string;
}

function olderThan7_78(version: string): boolean | undefined {
  const match = /^(\d+)\.(\d+)\./.exec(version);
  if (!match) return undefined;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major < FIRST_WITH_7_78_RULE[0] || (major === FIRST_WITH_7_78_RULE[0] && minor < FIRST_WITH_7_78_RULE[1]);
}

function clusterNameRule(hint: AgentVersionHint | undefined): ClusterNameRule {
  const older = hint ? olderThan7_78(hint.version) : undefined;
  const why = hint && older !== undefined ? `agent ${hint.version} from ${hint.source}` : 'agent version unknown: the newest';
  if (older) {
    return {
      pattern: GKE_RULE,
      label: `agent ≤ 7.77 cluster_name rule (${why})`,
      demand: 'lower-case dot-separated labels (letters, digits, hyphens; starting with a letter)',
    };
  }
  return {
    pattern: RULE_7_78,
    label: `agent ≥ 7.78 cluster_name rule (${why})`,
    demand: 'lower-case dot-separated labels (letters, digits, hyphens, underscores; starting and ending with a letter or digit)',
  };
}

interface ClusterNameChoice {
  /** The suffix to append, or undefined for the plain node name. */
  name?: string;
  /** Set when cluster_name is configured: which rule judged it. */
  rule?: string;
  notes: string[];
}

export function clusterNameFor(config: AgentConfig, nodeName: string, hint?: AgentVersionHint): ClusterNameChoice {
  const notes: string[] = [];
  const raw = config.get('cluster_name');
  let name = raw === undefined || raw === null ? '' : String(raw);
  const rule = clusterNameRule(hint);
  if (name !== '') {
    if (!rule.pattern.test(name)) {
      notes.push(`cluster_name ${JSON.stringify(name)} is ignored, as by the agent (${rule.label}): it must be ${rule.demand}`);
      name = '';
    } else if (`${nodeName}-${name}`.length > MAX_HOSTNAME_LENGTH) {
      notes.push(`cluster_name is ignored, as by the agent: ${nodeName}-${name} would be longer than ${MAX_HOSTNAME_LENGTH} characters`);
      name = '';
    }
  }
  const judged = raw === undefined || raw === null || String(raw) === '' ? {} : { rule: rule.label };
  if (name === '') {
    notes.push(
      'no usable cluster_name: the agent may still append a cluster name it discovers (cloud metadata, node labels), ' +
        'which this tool does not; set cluster_name to be sure',
    );
  } else if (config.getString('kubernetes_node_label_as_cluster_name')) {
    notes.push(
      'kubernetes_node_label_as_cluster_name is set: a node label may replace cluster_name in the agent, which this tool does not read',
    );
  }
  return name === '' ? { ...judged, notes } : { name: name.replaceAll('_', '-'), ...judged, notes };
}
