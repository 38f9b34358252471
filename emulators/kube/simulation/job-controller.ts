import { isDeepStrictEqual } from 'node:util';
import { create, list, remove, type SimContext, update } from './context.js';
import { findCondition, isControlledBy, isDeleting, nowTimestamp, omitZero } from './objects.js';
import { byCreationScheduledFirst, isActive, isReady, isTerminal, isTerminating, phaseOf } from './pods.js';
import { podFromTemplate } from './replicaset-controller.js';
import type { Condition, Job, Pod } from './types.js';

const COMPONENT = 'job-controller';
const SUCCESS_MESSAGE = 'Reached expected number of succeeded pods';

/** A terminal condition the controller has decided on: the target first, the final one once no Pod is left terminating. */
interface Verdict {
  target: 'SuccessCriteriaMet' | 'FailureTarget';
  final: 'Complete' | 'Failed';
  reason: string;
  message: string;
}

function hasCondition(job: Job, type: string): boolean {
  return findCondition(job.status?.conditions, type)?.status === 'True';
}

function condition(type: string, reason: string, message: string): Condition {
  const now = nowTimestamp();
  return { type, status: 'True', lastProbeTime: now, lastTransitionTime: now, reason, message };
}

/** A verdict recorded earlier (the target condition is set, the final one not yet). */
function verdictOf(conditions: Condition[]): Verdict | undefined {
  const success = conditions.find((c) => c.type === 'SuccessCriteriaMet' && c.status === 'True');
  if (success) return { target: 'SuccessCriteriaMet', final: 'Complete', reason: success.reason ?? 'CompletionsReached', message: success.message ?? SUCCESS_MESSAGE };
  const failure = conditions.find((c) => c.type === 'FailureTarget' && c.status === 'True');
  if (failure) return { target: 'FailureTarget', final: 'Failed', reason: failure.reason ?? 'BackoffLimitExceeded', message: failure.message ?? '' };
  return undefined;
}

/**
 * A minimal Job controller (pkg/controller/job), NonIndexed completion only: it keeps
 * min(parallelism, completions - succeeded) Pods running from the template (named
 * <job>-<5 chars>, controlled by the Job), counts Succeeded and Failed Pods, fails the Job past
 * backoffLimit or activeDeadlineSeconds, and reports status as the controller does since 1.31
 * (SuccessCriteriaMet/FailureTarget first, Complete/Failed once no Pod is terminating). A
 * suspended Job has no Pods. Pods are not given the job-tracking finalizer.
 */
export class JobController {
  /** When each Job started, at ms precision (status.startTime has seconds only), for activeDeadlineSeconds. */
  private readonly startedAt = new Map<string, number>();

  constructor(private readonly ctx: SimContext) {}

  sync(): void {
    const pods = list<Pod>(this.ctx, 'v1', 'Pod');
    const live = new Set<string>();
    for (const job of list<Job>(this.ctx, 'batch/v1', 'Job')) {
      live.add(job.metadata.uid!);
      if (isDeleting(job) || hasCondition(job, 'Complete') || hasCondition(job, 'Failed')) continue;
      this.syncJob(job, pods.filter((p) => p.metadata.namespace === job.metadata.namespace && isControlledBy(p, job)));
    }
    for (const uid of this.startedAt.keys()) if (!live.has(uid)) this.startedAt.delete(uid);
  }

  private syncJob(job: Job, owned: Pod[]): void {
    const spec = job.spec;
    const active = owned.filter(isActive);
    // Counts only grow: without the job-tracking finalizer a finished Pod someone deletes would otherwise be forgotten.
    const succeeded = Math.max(job.status?.succeeded ?? 0, owned.filter((p) => phaseOf(p) === 'Succeeded').length);
    const failed = Math.max(job.status?.failed ?? 0, owned.filter((p) => phaseOf(p) === 'Failed').length);
    const suspended = spec.suspend === true;
    const status = structuredClone(job.status ?? {});
    let conditions = [...(status.conditions ?? [])];
    // A Job resumed from suspension starts its clock again.
    if (!suspended && (!status.startTime || hasCondition(job, 'Suspended'))) {
      status.startTime = nowTimestamp();
      this.startedAt.set(job.metadata.uid!, Date.now());
    }

    let verdict = verdictOf(conditions);
    if (!verdict && !suspended) verdict = this.decide(job, active.length, succeeded, failed);
    if (verdict && !conditions.some((c) => c.type === verdict!.target)) {
      conditions.push(condition(verdict.target, verdict.reason, verdict.message));
    }
    if (verdict || suspended) {
      for (const pod of active) this.deletePod(job, pod);
    } else {
      this.manage(job, active, succeeded);
    }
    const remaining = list<Pod>(this.ctx, 'v1', 'Pod', job.metadata.namespace).filter((p) => isControlledBy(p, job));
    const stillActive = remaining.filter(isActive);
    const terminating = remaining.filter((p) => isTerminating(p) && !isTerminal(p)).length;
    if (verdict && stillActive.length === 0 && terminating === 0 && !conditions.some((c) => c.type === verdict!.final)) {
      conditions.push(condition(verdict.final, verdict.reason, verdict.message));
      if (verdict.final === 'Complete') {
        status.completionTime = nowTimestamp();
        this.ctx.events.record(job, 'Normal', 'Completed', 'Job completed', COMPONENT);
      } else {
        this.ctx.events.record(job, 'Warning', verdict.reason, verdict.message, COMPONENT);
      }
    }
    if (suspended && !hasCondition(job, 'Suspended')) {
      conditions = conditions.filter((c) => c.type !== 'Suspended');
      conditions.push(condition('Suspended', 'JobSuspended', 'Job suspended'));
      this.ctx.events.record(job, 'Normal', 'Suspended', 'Job suspended', COMPONENT);
    } else if (!suspended && hasCondition(job, 'Suspended')) {
      conditions = conditions.map((c) => (c.type === 'Suspended' ? { ...condition('Suspended', 'JobResumed', 'Job resumed'), status: 'False' as const } : c));
      this.ctx.events.record(job, 'Normal', 'Resumed', 'Job resumed', COMPONENT);
    }
    const next = {
      ...omitZero({ ...status, active: stillActive.length, succeeded, failed }),
      // Pointers in JobStatus: written even when zero.
      ready: stillActive.filter(isReady).length,
      terminating,
      uncountedTerminatedPods: {},
      ...(conditions.length ? { conditions } : {}),
    };
    if (isDeepStrictEqual(next, job.status ?? {})) return;
    const fresh = this.ctx.emu.getObject('batch/v1', 'Job', job.metadata.namespace, job.metadata.name!);
    if (!fresh || fresh.metadata.uid !== job.metadata.uid) return;
    update(this.ctx, { ...fresh, status: next });
  }

  private decide(job: Job, active: number, succeeded: number, failed: number): Verdict | undefined {
    const spec = job.spec;
    const completions = spec.completions;
    const done = typeof completions === 'number' ? succeeded >= completions : succeeded > 0 && active === 0;
    if (done) return { target: 'SuccessCriteriaMet', final: 'Complete', reason: 'CompletionsReached', message: SUCCESS_MESSAGE };
    if (failed > (spec.backoffLimit ?? 6)) {
      return { target: 'FailureTarget', final: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' };
    }
    const deadline = spec.activeDeadlineSeconds;
    if (typeof deadline === 'number') {
      const started = this.startedAt.get(job.metadata.uid!) ?? Date.parse(job.status?.startTime ?? '');
      const due = started + deadline * this.ctx.secondMs;
      if (Date.now() >= due) return { target: 'FailureTarget', final: 'Failed', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' };
      this.ctx.wakeAt(due);
    }
    return undefined;
  }

  /** Keeps min(parallelism, completions - succeeded) active Pods (any number up to parallelism until one succeeds, without completions). */
  private manage(job: Job, active: Pod[], succeeded: number): void {
    const parallelism = job.spec.parallelism ?? 1;
    const completions = job.spec.completions;
    const want = typeof completions === 'number' ? Math.max(0, Math.min(parallelism, completions - succeeded)) : succeeded > 0 ? 0 : parallelism;
    for (let i = active.length; i < want; i++) {
      const pod = create<Pod>(this.ctx, podFromTemplate(job.spec.template, job));
      if (pod) this.ctx.events.record(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, COMPONENT);
    }
    if (active.length > want) {
      // Newest first, unscheduled before scheduled, as the controller picks Pods to remove.
      const victims = [...active].sort(byCreationScheduledFirst(this.ctx)).reverse().slice(0, active.length - want);
      for (const pod of victims) this.deletePod(job, pod);
    }
  }

  private deletePod(job: Job, pod: Pod): void {
    if (remove(this.ctx, pod)) this.ctx.events.record(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, COMPONENT);
  }
}
