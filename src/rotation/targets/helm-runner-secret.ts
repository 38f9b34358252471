import type { AgentConfig } from '../../config/index.js';
import { resolveHost } from '../../host/index.js';
import { ConfigError, KubernetesError } from '../../errors.js';
import { apiStatus, HELM_RUNNER_LAYOUT, type SecretRef } from '../../kube/index.js';
import { sanitizeServerString } from '../../sanitize.js';
import type { ClusterSession } from '../../kube/cluster-session.js';
import type { CurrentIdentity, EnrollmentNaming } from '../target.js';
import { programName } from '../../single-executable.js';
import { commandLine } from '../../command-line.js';
import { SecretTargetBase } from './secret-base.js';

// `rotate-identity --k8s-secret NAME`: the standalone runner installed with the Helm chart keeps its
// identity in a Secret it reads as environment variables (docs/protocol.md §6b), so a running Pod only sees
// a new identity after the Deployment is rolled out. Previous values go to PREVIOUS_RUNNER_*.

export class HelmRunnerSecretTarget extends SecretTargetBase {
  readonly kind = 'helm-secret' as const;
  readonly flavor = 'private_action_runner' as const;
  readonly selector: string[];
  private readonly kubeFlags: string[];

  constructor(
    config: AgentConfig,
    session: ClusterSession,
    ref: SecretRef,
    selectors: { config: string[]; kube: string[] },
    keepPrevious: boolean,
    /** The workload named by --rollout, whose name prefixes the runner name. */
    private readonly workloadName: string | undefined,
    now: () => Date,
    private readonly env: NodeJS.ProcessEnv,
    /** The workload --rollout names (its kind with the name), and --override-agent-settings. */
    private readonly workload?: { kind: 'deployment' | 'daemonset'; name: string; override: boolean },
  ) {
    super(config, session, ref, HELM_RUNNER_LAYOUT, keepPrevious, now);
    this.selector = ['--k8s-secret', ref.name, '-n', ref.namespace, ...selectors.config, ...selectors.kube];
    this.kubeFlags = selectors.kube;
  }

  protected async whenMissing(): Promise<CurrentIdentity> {
    throw new KubernetesError(
      'SECRET_MISSING',
      `${this.label} does not exist`,
      'Nothing was changed. Pass the name set as runner.runnerIdentitySecret in the Helm values, and -n for its namespace.',
    );
  }

  override async read(): Promise<CurrentIdentity> {
    const current = await super.read();
    if (this.state?.state === 'present' && this.state.data[this.layout.urn] === undefined) {
      current.warnings.push(
        'the Secret has no RUNNER_URN: the chart takes the URN from its values, which must be updated to the new URN as well',
      );
    }
    return current;
  }

  protected async naming(): Promise<{ naming: EnrollmentNaming; notes: string[]; warnings: string[] }> {
    const prefix =
      this.workloadName ??
      (
        await resolveHost(this.config, {
          env: this.env,
          ...(this.session.conn.limits.deadline ? { deadline: this.session.conn.limits.deadline } : {}),
        })
      ).hostname;
    const readsIt = await this.workloadReadsSecret();
    return {
      naming: { flavor: this.flavor, runnerNamePrefix: prefix, hostname: prefix },
      notes: [`runner name prefix: ${prefix}`, ...readsIt.notes],
      warnings: readsIt.warnings,
    };
  }

  /**
   * The runner decides which Secret is its identity (docs/protocol.md §6b): the workload --rollout names
   * must read this one, through `envFrom` or an `env` secretKeyRef. A Secret it does not read would be
   * rotated, enrolled and rolled out for nothing: stopped before enrolling unless --override-agent-settings.
   * A workload that cannot be read is said (the rollout's own pre-flight names a missing one).
   */
  private async workloadReadsSecret(): Promise<{ notes: string[]; warnings: string[] }> {
    const w = this.workload;
    if (!w) return { notes: [], warnings: [] };
    const what = `${w.kind}/${w.name}`;
    let containers: { envFrom?: { secretRef?: { name?: string } }[]; env?: { valueFrom?: { secretKeyRef?: { name?: string } } }[] }[];
    try {
      const apps = this.session.conn.apps();
      const args = { name: w.name, namespace: this.ref.namespace };
      const object = w.kind === 'deployment' ? await apps.readNamespacedDeployment(args) : await apps.readNamespacedDaemonSet(args);
      containers = [...(object.spec?.template.spec?.initContainers ?? []), ...(object.spec?.template.spec?.containers ?? [])];
    } catch (err) {
      const { code } = apiStatus(err);
      const why =
        code === 403
          ? `get ${w.kind} ${this.ref.namespace}/${w.name} is forbidden to this user`
          : `it could not be read (${code ?? 'no answer'})`;
      return { notes: [], warnings: [`not compared: whether ${what} reads ${this.label} (${why})`] };
    }
    const named = new Set<string>();
    for (const c of containers) {
      for (const from of c.envFrom ?? []) if (from.secretRef?.name) named.add(from.secretRef.name);
      for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef?.name) named.add(e.valueFrom.secretKeyRef.name);
    }
    if (named.has(this.ref.name)) return { notes: [`${what} reads ${this.label} (envFrom/env)`], warnings: [] };
    const others = [...named].map((n) => sanitizeServerString(n, 80)).join(', ') || 'none';
    const message = `${what} does not read ${this.label}: the Secrets its containers read are ${others}`;
    if (w.override) return { notes: [], warnings: [`${message}; rotating it anyway (--override-agent-settings)`] };
    throw new ConfigError(
      'AGENT_SETTINGS_MISMATCH',
      message,
      'Nothing was enrolled and nothing was changed. ' +
        'Pass the Secret the runner reads (runner.runnerIdentitySecret in the Helm values) with --k8s-secret, ' +
        "or the runner's own workload with --rollout; --override-agent-settings rotates this Secret anyway.",
      { workload: what, secret: this.label, readsSecrets: [...named] },
    );
  }

  protected extraValues(): Record<string, string> {
    return {};
  }

  restartAdvice(): string {
    // Our rollout, not a bare `kubectl rollout restart`: it checks room first and restarts without a gap.
    const next = this.workloadName ? '' : ' (next time, --rollout deployment/NAME does it in the same run)';
    return (
      'the chart reads this Secret as environment variables: ' +
      `restart the runner's Deployment create-before-delete so its Pods load the new identity: ${this.restartCommand()}${next}`
    );
  }

  /** The runner's Deployment is the Helm release's: named when --rollout named it, else NAME to fill in. */
  restartCommand(): string {
    return commandLine([
      programName(),
      'rollout',
      `deployment/${this.workloadName ?? 'NAME'}`,
      '-n',
      this.ref.namespace,
      ...this.kubeFlags,
    ]);
  }
}
