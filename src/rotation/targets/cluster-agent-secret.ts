import { hostname as osHostname } from 'node:os';
import { programName } from '../../single-executable.js';
import { type AgentConfig, requireRunnerEnabled } from '../../config/index.js';
import { ConfigError, KubernetesError } from '../../errors.js';
import type { Io } from '../../io.js';
import { CLUSTER_AGENT_LAYOUT, CLUSTER_ID_CONFIGMAP, type ClusterId, HELM_SECRET_NAME, type IdentitySecretState, type ResolvedSecretTarget, resolveClusterId, SECRET_KEYS, secretExists, storeClusterId } from '../../kube/index.js';
import type { ClusterSession } from '../cluster-session.js';
import { commandLine } from '../command-line.js';
import type { CurrentIdentity, EnrollmentNaming, NewIdentity } from '../target.js';
import { SecretTargetBase } from './secret-base.js';

// The cluster agent's identity Secret (docs/protocol.md §6): data keys private_key, urn, orch_cluster_id,
// api_key_hash, the agent's labels, and previous_* kept beside them (the Go reader ignores extras).

/** The cluster agent keeps its identity in a Secret only with identity_use_k8s_secret (default true). */
export function requireSecretStorage(config: AgentConfig): void {
  requireRunnerEnabled(config);
  if (!config.getBool('private_action_runner.identity_use_k8s_secret')) {
    throw new ConfigError(
      'SECRET_STORAGE_DISABLED',
      'private_action_runner.identity_use_k8s_secret is false: this cluster agent does not keep its identity in a Secret',
      'Nothing was changed. Enable identity_use_k8s_secret, or rotate each runner with `par-identity rotate-identity`.',
    );
  }
}

export class ClusterAgentSecretTarget extends SecretTargetBase {
  readonly kind = 'cluster-secret' as const;
  readonly flavor = 'cluster_agent' as const;
  readonly selector: string[];
  private clusterId: ClusterId | undefined;
  private readonly kubeFlags: string[];

  constructor(
    config: AgentConfig,
    session: ClusterSession,
    readonly resolved: ResolvedSecretTarget,
    selectors: { config: string[]; kube: string[] },
    keepPrevious: boolean,
    private readonly io: Io,
  ) {
    super(config, session, { namespace: resolved.namespace, name: resolved.name }, CLUSTER_AGENT_LAYOUT, keepPrevious, () => io.now());
    this.selector = ['--secret', ...selectors.config, '-n', resolved.namespace, '--secret-name', resolved.name, ...selectors.kube];
    this.kubeFlags = selectors.kube;
  }

  protected async whenMissing(): Promise<CurrentIdentity> {
    const { ref } = this;
    if (ref.name !== HELM_SECRET_NAME && (await secretExists(this.core, { ...ref, name: HELM_SECRET_NAME }))) {
      throw new KubernetesError(
        'SECRET_NAME_MISMATCH',
        `Secret ${ref.namespace}/${ref.name} does not exist, but ${ref.namespace}/${HELM_SECRET_NAME} (the Helm/Operator name) does`,
        `Nothing was changed. Pass --secret-name ${HELM_SECRET_NAME} (or set private_action_runner.identity_secret_name) so the agent and this tool use the same Secret.`,
      );
    }
    return { state: 'missing', notes: ['the Secret does not exist yet: it will be created'], warnings: [] };
  }

  protected async naming(): Promise<{ naming: EnrollmentNaming; notes: string[]; warnings: string[] }> {
    // The agent reads its cluster id in its own namespace, which can differ from the Secret's.
    const clusterId = await resolveClusterId(this.core, this.session.conn.agentNamespace);
    this.clusterId = clusterId;
    const notes = [`cluster id: ${clusterId.id} (${clusterId.source})`];
    // Created only by the write, after enrolling: checked now, so a token that may not create it fails before.
    if (!clusterId.stored) {
      await storeClusterId(this.core, this.session.conn.agentNamespace, clusterId.id, { dryRun: true });
      notes.push('server-side dry run of the cluster-id ConfigMap create: allowed');
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
    const where = `ConfigMap ${this.session.conn.agentNamespace}/${CLUSTER_ID_CONFIGMAP}`;
    try {
      const stored = await storeClusterId(this.core, this.session.conn.agentNamespace, wanted.id, { dryRun: false });
      if (stored.createdByUs) return { notes: [`cluster id ${wanted.id} stored in new ${where}`], warnings: [] };
      if (stored.id === wanted.id) return { notes: [`cluster id: ${where} was created meanwhile, with the same id`], warnings: [] };
      return { notes: [], warnings: [`${where} was created meanwhile with id ${stored.id}, while this runner was enrolled with ${wanted.id} (also stored as orch_cluster_id)`] };
    } catch (err) {
      return { notes: [], warnings: [`${where} was not created (${(err as Error).message}); the agent creates it with the same kube-system UID when it starts`] };
    }
  }

  protected override extraFacts(state: IdentitySecretState): { clusterId: string | null } {
    return { clusterId: state.state === 'present' ? (state.data[SECRET_KEYS.clusterId] ?? null) : null };
  }

  protected override extraFactLines(state: IdentitySecretState): string[] {
    return [`  cluster:      ${(state.state === 'present' && state.data[SECRET_KEYS.clusterId]) || '(no orch_cluster_id)'}`];
  }

  restartAdvice(): string {
    const restart = this.restartCommand();
    return `replicas running \`${programName()} watch\` reload it within seconds; others need a restart create-before-delete: ${restart}`;
  }

  restartCommand(): string {
    // Our rollout, not a bare `kubectl rollout restart`: it checks room first and restarts without a gap.
    return commandLine([programName(), 'rollout', 'deployment/datadog-cluster-agent', '-n', this.ref.namespace, ...this.kubeFlags]);
  }
}
