import { parseAgentRef } from '../agent/agent-ref.js';
import { findClusterAgent, objectReader } from '../agent/find-agent.js';
import { readPodTemplate } from '../agent/pod-template.js';
import type { AgentConfig } from '../config/agent-config.js';
import { ConfigError } from '../errors.js';
import type { Sightings } from '../kube/agent-workloads.js';
import type { Reporter } from '../output.js';
import type { ClusterAgentReport } from '../results/identity.js';
import type { ClusterSession } from '../kube/cluster-session.js';
import { type AgentSettings, agentConfigOf, describeComparison, mergeAgentSettings } from './agent-settings.js';

// Off-cluster, a command acting for the cluster agent takes the settings the agent runs with
// (docs/configuration.md, "The running agent's settings"): found, read from its Pod template, compared
// with what this host states, and reported with their sources.

/** What a run found of the agent, as `status` shows it and a result lists it. */
type AgentSummary = ClusterAgentReport;

interface AgentResolution {
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
  agent?: AgentSettings;
  summary?: AgentSummary;
  /** No agent read: the labelled Deployments that were listed, for a refusal to name where they run. */
  sightings?: Sightings;
}

interface AgentFlags {
  agent?: string;
  namespace?: string;
  /** -c was given (not its default): the run can go on with it when no agent is found. */
  cfgPathGiven?: boolean;
  /** --secret-name: with -n, the Secret is named outright (an explicit choice, as watch's sidecar makes). */
  secretName?: string;
  /** A read (status): it never writes, so an explicitly named Secret is shown even with no agent found. */
  readOnly?: boolean;
  overrideAgentSettings?: boolean;
}

function agentNotFound(looked: string): ConfigError {
  return new ConfigError(
    'AGENT_NOT_FOUND',
    `no cluster agent to take the settings from: looked for ${looked}; no -c was given (the default config path of this host is not the cluster agent's)`,
    "Nothing was enrolled and nothing was changed. Pass --agent deployment/NAME -n NAMESPACE (the cluster agent's Deployment), " +
      "or -c with the cluster agent's config, or run inside the cluster agent's Pod.",
    { looked },
  );
}

/**
 * The run's settings: the agent's, with what this host states over them where the outcome is the
 * same (or --override-agent-settings). No agent: the local settings with -c, else AGENT_NOT_FOUND.
 */
export async function resolveAgentSettings(
  session: ClusterSession,
  flags: AgentFlags,
  local: { config: AgentConfig; env: NodeJS.ProcessEnv },
  report: Reporter,
): Promise<AgentResolution> {
  const explicit = flags.agent ? parseAgentRef(flags.agent) : undefined;
  const lookup = await findClusterAgent(session.conn.apps(), {
    ...(explicit ? { explicit } : {}),
    namespace: session.namespace,
    namespaceGiven: Boolean(flags.namespace),
  });
  if (!lookup.found) {
    const looked = lookup.denied && !lookup.looked.includes(lookup.denied) ? `${lookup.looked}; ${lookup.denied}` : lookup.looked;
    // A status of a Secret named outright (--secret-name and -n) reads it whatever runs: nothing is written.
    const namedOutright = Boolean(flags.readOnly && flags.secretName && flags.namespace);
    if (!flags.cfgPathGiven && !namedOutright) throw agentNotFound(looked);
    report.warn(
      `cluster agent not found (${looked}): going on with the local settings ` +
        `(${flags.cfgPathGiven ? '-c' : '--secret-name and -n'}), which nothing could be compared with`,
    );
    return { config: local.config, env: local.env, ...(lookup.seen ? { sightings: lookup.seen } : {}) };
  }
  const read = await readPodTemplate(lookup.found, objectReader(session.core));
  const agent: AgentSettings = { read, config: await agentConfigOf(read), how: lookup.how };
  const merged = mergeAgentSettings(local, agent, Boolean(flags.overrideAgentSettings));
  report.info(
    `cluster agent: ${read.label} (${agent.how}; layout ${read.layout}${read.version ? `, version ${read.version}` : ''}; ` +
      `container ${read.container || 'none'})`,
  );
  for (const file of read.files) report.info(`  ${file}`);
  for (const c of merged.compared) {
    if (c.outcome === 'overridden') report.warn(describeComparison(c));
    else report.info(`  ${describeComparison(c)}`);
  }
  for (const line of merged.notCompared) report.warn(`not compared: ${line}`);
  for (const line of read.notRead) if (!merged.notCompared.some((n) => n.endsWith(line))) report.warn(`not read: ${line}`);
  const summary: AgentSummary = {
    deployment: `${read.deployment.namespace}/${read.deployment.name}`,
    how: agent.how,
    layout: read.layout,
    ...(read.version ? { version: read.version } : {}),
    settings: merged.compared,
    files: read.files,
    notCompared: [...merged.notCompared, ...read.notRead.filter((line) => !merged.notCompared.some((n) => n.endsWith(line)))],
    overridden: merged.overridden,
  };
  return { config: merged.config, env: merged.env, agent, summary };
}
