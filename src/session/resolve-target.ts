import { type AgentConfig, loadAgentConfig, requireRunnerEnabled, resolveEndpoint, resolveIdentityPath } from '../config/index.js';
import { ConfigError, KubernetesError, UsageError } from '../errors.js';
import { environmentDifferences, findRunnerProcess, ownerOf, withRunnerEnvironment } from '../host/runner-process.js';
import { describeSightings, namespacesOf, type Sightings } from '../kube/agent-workloads.js';
import type { Io } from '../io.js';
import { namespaceUnknown, type ResolvedSecretTarget, resolveSecretTarget } from '../kube/secret-target.js';
import { serviceAccountNamespace } from '../kube/service-account.js';
import type { AgentSettings } from './agent-settings.js';
import type { Reporter } from '../output.js';
import { parseWorkloadRef } from '../rollout/workload-ref.js';
import type { ClusterSession } from '../kube/cluster-session.js';
import { clusterAccess } from './connection.js';
import { configSelector, kubeSelector } from '../command-line.js';
import { configPathGiven, DEFAULT_CFGPATH, type TargetOptions } from '../command-options.js';
import { outcomeDifferences, settleDifferences } from './runner-settings.js';
import type { ResolveChecks, ResolvedTarget } from '../rotation/resolved-target.js';
import type { TargetKind } from '../rotation/target.js';

// Options → the one target a run acts on, its agent config, and the run's cluster access. Each
// target's code is imported for its kind only: a local file run never loads the Secret targets, the
// Kubernetes code they use, nor the roll-out.

/** The config of a target kind as the agent would load it with `env`; says nothing. */
function loadConfigWith(kind: TargetKind, options: TargetOptions, env: NodeJS.ProcessEnv): Promise<AgentConfig> {
  return loadAgentConfig({
    cfgPath: options.cfgPath,
    extraFiles: options.extraCfg,
    env,
    ...(kind === 'cluster-secret' ? { fileNames: ['datadog-cluster.yaml', 'datadog.yaml'] } : {}),
    given: configPathGiven(options),
  });
}

/** The cluster agent reads datadog-cluster.yaml; a lone datadog.yaml is accepted and named. */
export async function loadTargetConfig(kind: TargetKind, options: TargetOptions, io: Io, report: Reporter): Promise<AgentConfig> {
  // Off-cluster with no -c, this host's default config path is a host agent's, not the cluster agent's: not
  // read. Nor in another Pod (the shipped CronJob's) when --agent names the agent whose settings to take.
  if (kind === 'cluster-secret' && !configPathGiven(options) && (!serviceAccountNamespace(io.env) || options.agent !== undefined)) {
    const config = await loadAgentConfig({ extraFiles: options.extraCfg, env: io.env });
    const over = options.extraCfg.length ? `, with ${options.extraCfg.join(', ')} over them` : '';
    report.info(`config: no -c given, so ${options.cfgPath} is not read: the running cluster agent's settings${over}`);
    return config;
  }
  const config = await loadConfigWith(kind, options, io.env);
  const looked = kind === 'cluster-secret' ? 'datadog-cluster.yaml or datadog.yaml' : 'datadog.yaml';
  report.info(config.file ? `config: ${config.files.join(', ')}` : `config: no ${looked} in ${options.cfgPath}; environment only`);
  return config;
}

export function targetKindOf(options: { secret?: boolean; k8sSecret?: string }): TargetKind {
  if (options.secret && options.k8sSecret) throw new UsageError('--secret and --k8s-secret select different Secrets: pass one of them');
  return options.secret ? 'cluster-secret' : options.k8sSecret ? 'helm-secret' : 'file';
}

export async function resolveTarget(
  kind: TargetKind,
  options: TargetOptions,
  ioGiven: Io,
  report: Reporter,
  checks: ResolveChecks,
): Promise<ResolvedTarget> {
  let io = ioGiven;
  let config = await loadTargetConfig(kind, options, io, report);
  // The runner process's DD_* environment is the one it reads (docs/configuration.md, "The running
  // runner's environment"): taken with --env-from-runner; else a value leading to another outcome
  // stops a rotation (src/session/runner-settings.ts).
  if (kind === 'file') {
    const runner = await findRunnerProcess(io.env, await ownerOf(config.file));
    if (options.envFromRunner) {
      if (!runner.found) {
        throw new ConfigError(
          'RUNNER_ENV_UNAVAILABLE',
          `--env-from-runner: no runner process whose environment can be read (${runner.notes.join('; ') || 'none running'})`,
          "Nothing was changed. Run as root or the agent's user while the runner runs, or drop --env-from-runner and set its DD_* variables here.",
        );
      }
      io = { ...io, env: withRunnerEnvironment(io.env, runner.found.env) };
      report.info(`environment: the DD_* variables of runner process ${runner.found.pid} (${runner.found.exe})`);
      config = await loadTargetConfig(kind, options, io, report);
    } else if (runner.found) {
      const differences = environmentDifferences(runner.found.env, io.env);
      if (differences.length) {
        const runnerEnv = withRunnerEnvironment(io.env, runner.found.env);
        const outcomes = await outcomeDifferences(
          { here: { config, env: io.env }, runner: { config: await loadConfigWith(kind, options, runnerEnv), env: runnerEnv } },
          {
            hostname: options.hostname !== undefined,
            identityFile: options.identityFile !== undefined,
            ...(options.agentVersion ? { agentVersion: options.agentVersion } : {}),
            ...(checks.deadline ? { deadline: checks.deadline } : {}),
          },
        );
        for (const warning of settleDifferences(outcomes, runner.found, {
          stop: checks.agentSettings === 'stop',
          override: checks.overrideAgentSettings === true,
        }))
          report.warn(warning);
        if (!outcomes.length)
          report.info(
            `the running runner (pid ${runner.found.pid}) has another DD_* environment than this one, ` +
              `with the same outcome (endpoint, API key hash, hostname, identity file): ${differences.join('; ')}`,
          );
      }
    }
  }
  // A site or dd_url that is no site (a URL in DD_SITE) is refused before any request, lock or read.
  resolveEndpoint(config, io.env);
  const configNs = config.getString('kube_resources_namespace');
  // Off-cluster, the cluster agent's settings are its Deployment's (src/session); inside its Pod the config is its
  // own. An explicit --agent takes them from that Deployment from anywhere, a CronJob's Pod included (deploy/).
  const offCluster = kind === 'cluster-secret' && (!serviceAccountNamespace(io.env) || options.agent !== undefined);
  const cluster = clusterAccess(
    { ...options, ...(checks.deadline ? { deadline: checks.deadline } : {}), ...(checks.signal ? { signal: checks.signal } : {}) },
    {
      kubeconfig: config.getString('kubernetes_kubeconfig_path'),
      // Only the cluster agent's Secret follows kube_resources_namespace; a Helm Secret or a rollout do not.
      ...(kind === 'cluster-secret' && !offCluster && configNs
        ? { namespace: { value: configNs, source: `kube_resources_namespace (${config.sourceOf('kube_resources_namespace')})` } }
        : {}),
    },
    io,
    report,
  );
  const selectors = { config: configSelector({ ...options, defaultCfgPath: DEFAULT_CFGPATH }), kube: kubeSelector(options) };
  const keepPrevious = options.keepPrevious !== false;
  if (kind === 'file') {
    if (checks.requireEnabled) requireRunnerEnabled(config, `datadog.yaml in ${options.cfgPath}`);
    const path = resolveIdentityPath(config, options.identityFile);
    report.info(`identity file: ${path.path} (${path.source})`);
    const { LocalFileTarget } = await import('../rotation/targets/local-file.js');
    return {
      config,
      cluster,
      target: new LocalFileTarget(config, path, selectors.config, io, options.hostname, options.agentVersion, checks.deadline),
    };
  }
  if (kind === 'cluster-secret') {
    const { ClusterAgentSecretTarget, requireSecretStorage } = await import('../rotation/targets/cluster-agent-secret.js');
    if (offCluster) {
      const { resolveAgentSettings } = await import('./cluster-agent.js');
      const agent = await resolveAgentSettings(
        await cluster(),
        { ...options, cfgPathGiven: configPathGiven(options), ...(checks.readOnly ? { readOnly: true } : {}) },
        { config, env: io.env },
        report,
      );
      config = agent.config;
      io = { ...io, env: agent.env };
      if (checks.requireEnabled) requireSecretStorage(config);
      const { findClusterAgentWorkloads } = await import('../kube/agent-workloads.js');
      const deployment = agent.agent?.read.deployment;
      const located = await locateClusterSecret(
        config,
        cluster,
        { ...options, ...(checks.readOnly ? { readOnly: true } : {}), ...(deployment ? { agentNamespace: deployment.namespace } : {}) },
        io,
        report,
        async (s) => (agent.sightings?.found.length ? agent.sightings : findClusterAgentWorkloads(s.conn.apps())),
      );
      const resolved = agent.agent
        ? await existingSecretLayout(located.session, located.resolved, agent.agent, options, report)
        : located.resolved;
      const target = new ClusterAgentSecretTarget(
        config,
        located.session,
        resolved,
        selectors,
        keepPrevious,
        io,
        checks.create,
        agent.summary,
      );
      return { config, cluster, target, env: io.env, ...(agent.summary ? { agent: agent.summary } : {}) };
    }
    if (checks.requireEnabled) requireSecretStorage(config, `datadog-cluster.yaml or datadog.yaml in ${options.cfgPath}`);
    const { findClusterAgentWorkloads } = await import('../kube/agent-workloads.js');
    const { session, resolved } = await locateClusterSecret(
      config,
      cluster,
      { ...options, ...(checks.readOnly ? { readOnly: true } : {}) },
      io,
      report,
      (s) => findClusterAgentWorkloads(s.conn.apps()),
    );
    return { config, cluster, target: new ClusterAgentSecretTarget(config, session, resolved, selectors, keepPrevious, io, checks.create) };
  }
  const session = await cluster();
  const ref = { namespace: session.namespace, name: options.k8sSecret ?? '' };
  report.info(`secret: ${ref.namespace}/${ref.name} (namespace from ${session.namespaceSource}; keys RUNNER_URN, RUNNER_PRIVATE_KEY)`);
  const workload = options.rollout ? parseWorkloadRef(options.rollout, ref.namespace) : undefined;
  const { HelmRunnerSecretTarget } = await import('../rotation/targets/helm-runner-secret.js');
  const checked = workload ? { kind: workload.kind, name: workload.name, override: options.overrideAgentSettings === true } : undefined;
  return {
    config,
    cluster,
    target: new HelmRunnerSecretTarget(config, session, ref, selectors, keepPrevious, workload?.name, () => io.now(), io.env, checked),
  };
}

/** The cluster agent's identity Secret on the run's connection (also what `watch` follows); docs/protocol.md §6c. */
export async function locateClusterSecret<S extends { namespace: string; namespaceSource: string } = ClusterSession>(
  config: AgentConfig,
  cluster: () => Promise<S>,
  flags: { namespace?: string; secretName?: string; readOnly?: boolean; agentNamespace?: string },
  io: Io,
  report: Reporter,
  /** Off-cluster without a namespace: the cluster-agent Deployments found by their labels (what status shows, and what a refusal names). */
  discover?: (session: S) => Promise<Sightings>,
): Promise<{ session: S; resolved: ResolvedSecretTarget }> {
  const session = await cluster();
  let resolved: ResolvedSecretTarget & { warnings: string[] };
  try {
    resolved = resolveSecretTarget(config, io.env, flags);
  } catch (err) {
    if (!(err instanceof KubernetesError) || err.code !== 'NAMESPACE_UNKNOWN' || !discover) throw err;
    const seen = await discover(session);
    const namespaces = namespacesOf(seen);
    const only = namespaces[0];
    // A read finds the agent where its Deployment runs; a write never acts on a guess.
    if (!flags.readOnly || namespaces.length !== 1 || !only)
      throw namespaceUnknown(`looked for ${describeSightings('cluster-agent Deployments (Helm/Operator labels)', seen)}`, namespaces);
    resolved = {
      ...resolveSecretTarget(config, io.env, { ...flags, namespace: only }),
      namespaceSource: `cluster-agent Deployment ${seen.found.join(', ')} (found by its labels)`,
      warnings: [],
    };
  }
  for (const warning of resolved.warnings) report.warn(warning);
  const { warnings: _, ...target } = resolved;
  report.info(`secret: ${target.namespace}/${target.name} (namespace from ${target.namespaceSource}, name from ${target.nameSource})`);
  return { session, resolved: target };
}

/**
 * Helm's identityFromExistingSecret (docs/configuration.md): the agent reads its own Secret first and
 * the identity env vars (DD_PRIVATE_ACTION_RUNNER_URN / _PRIVATE_KEY from the user's Secret) only when
 * that one does not exist. The identity in use is then the user's Secret: rotate it.
 */
/** identityFromExistingSecret: the user's Secret is rotated, and env vars reach the agent only with a rollout of its Deployment. */
function envIdentityNeedsRollout(secret: { namespace: string; name: string }, deployment: { namespace: string; name: string }): string {
  const restart = `kubectl rollout restart deployment/${deployment.name} -n ${deployment.namespace}, or --rollout deployment/${deployment.name}`;
  return (
    `the agent runs with its identity as env vars from Secret ${secret.namespace}/${secret.name} (identityFromExistingSecret): ` +
    'that Secret is rotated; env vars never change in a running container, ' +
    `so the agent takes the new identity only after a rollout (${restart})`
  );
}

export async function existingSecretLayout(
  session: ClusterSession,
  resolved: ResolvedSecretTarget,
  agent: AgentSettings,
  options: Pick<TargetOptions, 'secretName'>,
  report: Reporter,
): Promise<ResolvedSecretTarget> {
  const env = agent.read.identityEnv;
  if (!env?.urn || options.secretName) return resolved;
  const { secretExists } = await import('../kube/index.js');
  if (await secretExists(session.core, { namespace: resolved.namespace, name: resolved.name })) {
    report.info(
      `identity: Secret ${resolved.namespace}/${resolved.name} exists, ` +
        'and the agent takes it before its DD_PRIVATE_ACTION_RUNNER_URN env (identityFromExistingSecret)',
    );
    return resolved;
  }
  const user = env.urn;
  if (user.key !== 'urn' || (env.privateKey && (env.privateKey.name !== user.name || env.privateKey.key !== 'private_key'))) {
    throw new ConfigError(
      'AGENT_SETTINGS_MISMATCH',
      `the agent reads its identity from env DD_PRIVATE_ACTION_RUNNER_URN / _PRIVATE_KEY of ${agent.read.label}, ` +
        'from Secret keys other than urn and private_key of one Secret',
      'Nothing was enrolled and nothing was changed. Rotate that identity by hand, or let the agent keep it in its own Secret (selfEnroll).',
    );
  }
  report.warn(envIdentityNeedsRollout(user, agent.read.deployment));
  return {
    ...resolved,
    namespace: user.namespace,
    name: user.name,
    nameSource: `env DD_PRIVATE_ACTION_RUNNER_URN of ${agent.read.label} (secretKeyRef; the agent's own Secret ${resolved.name} does not exist)`,
    agentsForSure: true,
  };
}
