import { hostname as osHostname } from 'node:os';
import { programName } from '../../single-executable.js';
import { type AgentConfig, requireRunnerEnabled } from '../../config/index.js';
import { ConfigError, KubernetesError } from '../../errors.js';
import type { Io } from '../../io.js';
import {
  CLUSTER_AGENT_LAYOUT,
  CLUSTER_ID_CONFIGMAP,
  type ClusterId,
  HELM_SECRET_NAME,
  type IdentitySecretState,
  type ResolvedSecretTarget,
  resolveClusterId,
  SECRET_KEYS,
  type SecretRef,
  secretExists,
  storeClusterId,
} from '../../kube/index.js';
import type { ClusterAgentReport } from '../../results/identity.js';
import type { ClusterSession } from '../../kube/cluster-session.js';
import { commandLine } from '../../command-line.js';
import type { CurrentIdentity, EnrollmentNaming, NewIdentity } from '../target.js';
import type { AgentReload } from '../../results/rotation.js';
import { SecretTargetBase } from './secret-base.js';
import { sanitizeServerString } from '../../sanitize.js';
import { describeSightings, findClusterAgentWorkloads, findSecretsNamed, namespacesOf } from '../../kube/agent-workloads.js';
import { agentVersionOfImage, isReleaseVersion, reloadBehaviour } from '../../agent/reload-behaviour.js';

// The cluster agent's identity Secret (docs/protocol.md §6): data keys private_key, urn, orch_cluster_id,
// api_key_hash, the agent's labels, and previous_* kept beside them (the Go reader ignores extras).

/** The cluster agent keeps its identity in a Secret only with identity_use_k8s_secret (default true). */
export function requireSecretStorage(config: AgentConfig, looked?: string): void {
  requireRunnerEnabled(config, looked);
  if (!config.getBool('private_action_runner.identity_use_k8s_secret')) {
    throw new ConfigError(
      'SECRET_STORAGE_DISABLED',
      'private_action_runner.identity_use_k8s_secret is false: this cluster agent does not keep its identity in a Secret',
      'Nothing was changed. Enable identity_use_k8s_secret, or rotate each runner with `par-identity rotate-identity`.',
    );
  }
}

/**
 * The cluster id as shown and put in --json: whoever may edit the ConfigMap or the Secret wrote it.
 * What is enrolled and stored is the id itself, byte for byte, as the agent uses it.
 */
function shownId(id: string): string {
  return sanitizeServerString(id, 64);
}

/** Why a missing Secret is not created: nothing says its namespace is the cluster agent's. */
function namespaceNotTheAgents(ref: SecretRef, namespaceSource: string): string {
  return (
    `Secret ${ref.namespace}/${ref.name} does not exist, and namespace ${ref.namespace} (from ${namespaceSource}) ` +
    `is not known to be the cluster agent's: no cluster-agent Deployment (Helm/Operator labels) there, no kube_resources_namespace, ` +
    'not inside its Pod.'
  );
}

export class ClusterAgentSecretTarget extends SecretTargetBase {
  readonly kind = 'cluster-secret' as const;
  readonly flavor = 'cluster_agent' as const;
  readonly selector: string[];
  private clusterId: ClusterId | undefined;
  private clusterIdWhere: string | undefined;
  /** The cluster-agent Deployment found by its labels in the Secret's namespace: what a restart names. */
  private agentDeployment: string | undefined;
  private readonly kubeFlags: string[];
  /** The cluster agent's version and where it was read: decides whether a restart is needed (docs/protocol.md §6d). */
  private agentVersion: { version: string; source: string } | undefined;
  /** Set when this run created the Secret: an agent that reloads on an update does not see a creation. */
  private created = false;

  /** "namespace/name" of the cluster agent's Deployment whose settings the run took, if it did. */
  private agentRead: string | undefined;

  constructor(
    config: AgentConfig,
    session: ClusterSession,
    readonly resolved: ResolvedSecretTarget,
    selectors: { config: string[]; kube: string[] },
    keepPrevious: boolean,
    private readonly io: Io,
    /** Set for a rotation (which creates a missing Secret); `confirmed`: --create. */
    private readonly create?: { confirmed: boolean },
    /** Off-cluster: the running agent whose settings the run took (src/session). */
    agent?: ClusterAgentReport,
  ) {
    super(config, session, { namespace: resolved.namespace, name: resolved.name }, CLUSTER_AGENT_LAYOUT, keepPrevious, () => io.now());
    if (agent) {
      this.agentRead = agent.deployment;
      Object.assign(this.where, { clusterAgent: agent });
      this.noteDeployment([agent.deployment]);
      if (agent.version)
        this.noteAgentVersion(agent.version, `image of deployment/${agent.deployment.slice(agent.deployment.indexOf('/') + 1)}`);
    }
    this.selector = ['--secret', ...selectors.config, '-n', resolved.namespace, '--secret-name', resolved.name, ...selectors.kube];
    this.kubeFlags = selectors.kube;
  }

  protected async whenMissing(): Promise<CurrentIdentity> {
    const { ref } = this;
    if (ref.name !== HELM_SECRET_NAME && (await secretExists(this.core, { ...ref, name: HELM_SECRET_NAME }))) {
      throw new KubernetesError(
        'SECRET_NAME_MISMATCH',
        `Secret ${ref.namespace}/${ref.name} does not exist, but ${ref.namespace}/${HELM_SECRET_NAME} (the Helm/Operator name) does`,
        `Nothing was changed. Pass --secret-name ${HELM_SECRET_NAME} (or set private_action_runner.identity_secret_name) ` +
          'so the agent and this tool use the same Secret.',
      );
    }
    if (this.create)
      return {
        state: 'missing',
        notes: [`the Secret does not exist yet: it will be created (${await this.whyCreateHere()})`],
        warnings: [],
      };
    return { state: 'missing', notes: ['the Secret does not exist'], warnings: [] };
  }

  /**
   * A Secret is created only where the agent is sure to read it (docs/protocol.md §6c): a wrong
   * namespace would enroll a runner no agent uses, and its undo could restore nothing.
   */
  private async whyCreateHere(): Promise<string> {
    const { ref, resolved } = this;
    if (resolved.agentsForSure) return `namespace from ${resolved.namespaceSource}`;
    const here = await findClusterAgentWorkloads(this.session.conn.apps(), ref.namespace);
    this.noteDeployment(here.found);
    if (here.found.length > 0) return `cluster agent ${here.found.join(', ')} runs in namespace ${ref.namespace}`;
    if (this.create?.confirmed) return `--create, though no cluster-agent Deployment was found in namespace ${ref.namespace}`;
    const workloads = await findClusterAgentWorkloads(this.session.conn.apps());
    const secrets = await findSecretsNamed(this.core, ref.name);
    const agents = describeSightings('cluster-agent Deployments', workloads);
    const sightings = `${agents}; ${describeSightings(`identity Secrets named ${ref.name}`, secrets)}`;
    throw new KubernetesError(
      'SECRET_CREATE_UNCERTAIN',
      `${namespaceNotTheAgents(ref, resolved.namespaceSource)} ${sightings}`,
      'Nothing was enrolled and nothing was changed. Pass -n <the namespace the cluster agent runs in>; ' +
        `or, if ${ref.namespace} is where the agent reads its Secret, add --create.`,
      { namespace: ref.namespace, clusterAgents: workloads.found, identitySecrets: secrets.found },
    );
  }

  /**
   * Where the agent reads datadog-cluster-id: its own Pod's namespace (docs/protocol.md §6c). Off-cluster,
   * the cluster agent's Deployment tells; else the Secret's namespace, when kube_resources_namespace
   * does not separate the two.
   */
  private async clusterIdNamespace(): Promise<{ namespace: string; source: string }> {
    const inPod = this.session.conn.agentNamespace;
    if (inPod && !this.agentRead) return { namespace: inPod, source: 'service-account namespace file' };
    // The agent whose settings the run took (src/session): its Deployment's namespace is its Pod's, with
    // no list at all (the shipped Role names that Deployment only; deploy/rotation-cronjob.yaml).
    if (this.agentRead)
      return { namespace: this.agentRead.slice(0, this.agentRead.indexOf('/')), source: `namespace of cluster agent ${this.agentRead}` };
    // The Secret's namespace first: a namespaced Role can list there, where a cluster-wide list is often forbidden.
    const beside = await findClusterAgentWorkloads(this.session.conn.apps(), this.ref.namespace);
    this.noteDeployment(beside.found);
    if (beside.found.length > 0) return { namespace: this.ref.namespace, source: `namespace of cluster agent ${beside.found.join(', ')}` };
    const seen = await findClusterAgentWorkloads(this.session.conn.apps());
    const namespaces = namespacesOf(seen);
    const ns = namespaces.includes(this.ref.namespace) ? this.ref.namespace : namespaces.length === 1 ? namespaces[0] : undefined;
    if (ns) return { namespace: ns, source: `namespace of cluster agent ${seen.found.filter((f) => f.startsWith(`${ns}/`)).join(', ')}` };
    if (namespaces.length === 0 && !this.resolved.configNamespace)
      return {
        namespace: this.ref.namespace,
        source: "the Secret's namespace (no kube_resources_namespace, no cluster-agent Deployment found)",
      };
    throw new KubernetesError(
      'NAMESPACE_UNKNOWN',
      `the namespace of ConfigMap ${CLUSTER_ID_CONFIGMAP} is unknown: the agent reads it in its own Pod's namespace, ` +
        'which kube_resources_namespace does not give; ' +
        `looked for ${describeSightings('cluster-agent Deployments (Helm/Operator labels)', seen)}`,
      'Nothing was enrolled and nothing was changed. Run inside the cluster agent Pod, or allow listing Deployments so its namespace can be found.',
    );
  }

  /**
   * The version the found cluster-agent Deployment runs, from its image tag: best effort (a get RBAC
   * forbids leaves it unknown, and the advice then says both possibilities).
   */
  private async readAgentImage(): Promise<void> {
    if (!this.agentDeployment || this.agentVersion) return;
    try {
      const d = await this.session.conn.apps().readNamespacedDeployment({ name: this.agentDeployment, namespace: this.ref.namespace });
      const containers = d.spec?.template?.spec?.containers ?? [];
      const image = (containers.find((c) => c.name === 'cluster-agent') ?? containers[0])?.image;
      const version = agentVersionOfImage(image);
      if (version) this.noteAgentVersion(version, `image of deployment/${this.agentDeployment}`);
    } catch {
      // Unknown version: the advice says so.
    }
  }

  /**
   * The running agent's version, from whoever knows it best: the agent itself (IPC) or a release number
   * on its Deployment's image win over --agent-version, which wins over a floating image tag.
   */
  noteAgentVersion(version: string, source: string): void {
    const fromImage = (s: string) => s.startsWith('image of') || s === 'cluster agent image';
    const rank = (s: string, v: string) =>
      s === 'agent IPC' ? 3 : fromImage(s) && isReleaseVersion(v) ? 2 : s === '--agent-version' ? 1 : 0;
    if (!this.agentVersion || rank(source, version) > rank(this.agentVersion.source, this.agentVersion.version))
      this.agentVersion = { version, source };
  }

  /** What the running agent does with the written Secret (docs/protocol.md §6d). */
  reload(): AgentReload {
    const b = reloadBehaviour(this.agentVersion?.version);
    return {
      ...b,
      agentVersion: this.agentVersion ? sanitizeServerString(this.agentVersion.version, 64) : null,
      versionSource: this.agentVersion?.source ?? null,
    };
  }

  override async write(...args: Parameters<SecretTargetBase['write']>): ReturnType<SecretTargetBase['write']> {
    const outcome = await super.write(...args);
    if ('action' in outcome.data && outcome.data.action === 'created') this.created = true;
    return outcome;
  }

  /** A restart is needed unless the running agent reloads this change by itself. */
  restartNeeded(): boolean {
    return this.created || this.reload().reloads !== 'urn-change';
  }

  /** One Deployment only: with several, the restart keeps the chart's usual name rather than pick one. */
  private noteDeployment(found: string[]): void {
    const [only, ...more] = found;
    if (only && more.length === 0) this.agentDeployment = only.slice(only.indexOf('/') + 1);
  }

  protected async naming(): Promise<{ naming: EnrollmentNaming; notes: string[]; warnings: string[] }> {
    // The agent reads its cluster id in its own namespace, which can differ from the Secret's.
    const where = await this.clusterIdNamespace();
    this.clusterIdWhere = where.namespace;
    await this.readAgentImage();
    const clusterId = await resolveClusterId(this.core, where);
    this.clusterId = clusterId;
    const notes = [`cluster id: ${shownId(clusterId.id)} (${clusterId.source})`];
    // Created only by the write, after enrolling: checked now, so a token that may not create it fails before.
    if (!clusterId.stored) {
      await storeClusterId(this.core, where.namespace, clusterId, { dryRun: true });
      notes.push(`server-side dry run of the cluster-id ConfigMap ${clusterId.replaces ? 'update' : 'create'}: allowed`);
    }
    const warnings: string[] = [];
    // Runner-name prefix: cluster_name, else the hostname (docs/protocol.md §3), with a warning.
    let prefix = this.config.getString('cluster_name');
    if (!prefix) {
      prefix = this.config.getString('hostname') ?? this.io.env.HOSTNAME ?? osHostname();
      warnings.push(`cluster_name is not set; the runner is named after the hostname ${prefix}`);
    }
    return { naming: { flavor: this.flavor, runnerNamePrefix: prefix, clusterId: clusterId.id }, notes, warnings };
  }

  protected extraValues(next: NewIdentity): Record<string, string> {
    return { ...(this.clusterId ? { [SECRET_KEYS.clusterId]: this.clusterId.id } : {}), [SECRET_KEYS.apiKeyHash]: next.apiKeyHash };
  }

  /** The cluster-id ConfigMap, when the agent has not stored one yet: as the agent does, with the id the runner was enrolled with. */
  protected override async afterWrite(): Promise<{ notes: string[]; warnings: string[] }> {
    const wanted = this.clusterId;
    if (!wanted || wanted.stored) return { notes: [], warnings: [] };
    const namespace = this.clusterIdWhere ?? this.ref.namespace;
    const where = `ConfigMap ${namespace}/${CLUSTER_ID_CONFIGMAP}`;
    try {
      const stored = await storeClusterId(this.core, namespace, wanted, { dryRun: false });
      if (stored.createdByUs) return { notes: [`cluster id ${shownId(wanted.id)} stored in new ${where}`], warnings: [] };
      if (stored.id === wanted.id) return { notes: [`cluster id: ${where} was created meanwhile, with the same id`], warnings: [] };
      return {
        notes: [],
        warnings: [
          `${where} was created meanwhile with id ${shownId(stored.id)}, ` +
            `while this runner was enrolled with ${shownId(wanted.id)} (also stored as orch_cluster_id)`,
        ],
      };
    } catch (err) {
      return {
        notes: [],
        warnings: [
          `${where} was not created (${(err as Error).message}); the agent creates it with the same kube-system UID when it starts`,
        ],
      };
    }
  }

  protected override extraFacts(state: IdentitySecretState): { clusterId: string | null } {
    const id = state.state === 'present' ? state.data[SECRET_KEYS.clusterId] : undefined;
    return { clusterId: id === undefined ? null : shownId(id) };
  }

  protected override extraFactLines(state: IdentitySecretState): string[] {
    const id = state.state === 'present' ? state.data[SECRET_KEYS.clusterId] : undefined;
    return [`  cluster:      ${id ? shownId(id) : '(no orch_cluster_id)'}`];
  }

  restartAdvice(): string {
    const restart = this.restartCommand();
    const b = this.reload();
    const agent = b.agentVersion ? `cluster agent ${b.agentVersion} (${b.versionSource})` : 'the cluster agent';
    const watch = `replicas running \`${programName()} watch\` reload it within seconds`;
    if (b.reloads === 'urn-change' && !this.created)
      return `${agent} reloads the identity when the Secret's urn changes (${b.why}): no restart needed`;
    if (b.reloads === 'urn-change')
      return `${agent} reloads only when an existing Secret is updated, and this run created it: restart it create-before-delete: ${restart}`;
    if (b.reloads === 'none')
      return `${agent} reads the identity only at start (${b.why}): restart it create-before-delete: ${restart}; ${watch}`;
    return `${b.why}; so nothing is promised: restart it create-before-delete to be sure: ${restart}; ${watch}`;
  }

  /** Undoing a creation is deleting what was created: there is no previous identity to roll back to. */
  undoCreation(): string {
    return commandLine(['kubectl', '-n', this.ref.namespace, ...this.kubeFlags, 'delete', 'secret', this.ref.name]);
  }

  restartCommand(): string {
    // Our rollout, not a bare `kubectl rollout restart`: it checks room first and restarts without a gap.
    return commandLine([
      programName(),
      'rollout',
      `deployment/${this.agentDeployment ?? 'datadog-cluster-agent'}`,
      '-n',
      this.ref.namespace,
      ...this.kubeFlags,
    ]);
  }
}
