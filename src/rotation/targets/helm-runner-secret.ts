import type { AgentConfig } from '../../config/index.js';
import { resolveHost } from '../../host/index.js';
import { KubernetesError } from '../../errors.js';
import { HELM_RUNNER_LAYOUT, type SecretRef } from '../../kube/index.js';
import type { ClusterSession } from '../cluster-session.js';
import type { CurrentIdentity, EnrollmentNaming } from '../target.js';
import { programName } from '../../single-executable.js';
import { commandLine } from '../command-line.js';
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
  ) {
    super(config, session, ref, HELM_RUNNER_LAYOUT, keepPrevious, now);
    this.selector = ['--k8s-secret', ref.name, '-n', ref.namespace, ...selectors.config, ...selectors.kube];
    this.kubeFlags = selectors.kube;
  }

  protected async whenMissing(): Promise<CurrentIdentity> {
    throw new KubernetesError('SECRET_MISSING', `${this.label} does not exist`, 'Nothing was changed. Pass the name set as runner.runnerIdentitySecret in the Helm values, and -n for its namespace.');
  }

  override async read(): Promise<CurrentIdentity> {
    const current = await super.read();
    if (this.state?.state === 'present' && this.state.data[this.layout.urn] === undefined) {
      current.warnings.push('the Secret has no RUNNER_URN: the chart takes the URN from its values, which must be updated to the new URN as well');
    }
    return current;
  }

  protected async naming(): Promise<{ naming: EnrollmentNaming; notes: string[]; warnings: string[] }> {
    const prefix = this.workloadName ?? (await resolveHost(this.config, { env: this.env })).hostname;
    return { naming: { flavor: this.flavor, runnerNamePrefix: prefix, hostname: prefix }, notes: [`runner name prefix: ${prefix}`], warnings: [] };
  }

  protected extraValues(): Record<string, string> {
    return {};
  }

  restartAdvice(): string {
    // Our rollout, not a bare `kubectl rollout restart`: it checks room first and restarts without a gap.
    const next = this.workloadName ? '' : ' (next time, --rollout deployment/NAME does it in the same run)';
    return `the chart reads this Secret as environment variables: restart the runner's Deployment create-before-delete so its Pods load the new identity: ${this.restartCommand()}${next}`;
  }

  /** The runner's Deployment is the Helm release's: named when --rollout named it, else NAME to fill in. */
  restartCommand(): string {
    return commandLine([programName(), 'rollout', `deployment/${this.workloadName ?? 'NAME'}`, '-n', this.ref.namespace, ...this.kubeFlags]);
  }
}
