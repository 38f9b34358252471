import { isDeepStrictEqual } from 'node:util';
import { type LabelSelectorSpec, labelSelectorMatches } from './selectors.js';
import { FieldError, GoValue, goStringMap } from './status-errors.js';
import { CONTROLLER_UID_LABELS, JOB_NAME_LABELS } from './strategy.js';
import type { KubeObject } from './types.js';

// What pkg/apis/batch/validation checks of a Job and a CronJob (the parts our callers can hit):
// the job spec shared by both, the generated selector of a Job, and what a Job update may change.

type Obj = Record<string, unknown>;

const NEGATIVE = 'must be greater than or equal to 0';
const IMMUTABLE = 'field is immutable';
/** Pods of a Job carry it while the job controller still has to count them; users may not set it. */
const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

function obj(v: unknown): Obj {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {};
}

function nonNegative(spec: Obj, key: string, base: string, errs: FieldError[]): void {
  const v = spec[key];
  if (typeof v === 'number' && v < 0) errs.push(new FieldError('FieldValueInvalid', `${base}.${key}`, NEGATIVE, v));
}

/** validateJobSpec: counts, completion mode, the Pod template, and a restartPolicy a Job can finish with. */
function validateJobSpec(spec: Obj, base: string, errs: FieldError[]): void {
  for (const key of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished']) nonNegative(spec, key, base, errs);
  const mode = spec['completionMode'];
  if (mode !== undefined && mode !== 'NonIndexed' && mode !== 'Indexed') {
    errs.push(new FieldError('FieldValueNotSupported', `${base}.completionMode`, 'supported values: "NonIndexed", "Indexed"', String(mode)));
  }
  if (mode === 'Indexed' && (spec['completions'] === undefined || spec['completions'] === null)) {
    errs.push(new FieldError('FieldValueRequired', `${base}.completions`, 'when completion mode is Indexed'));
  }
  const pod = obj(obj(spec['template'])['spec']);
  const at = `${base}.template.spec`;
  const containers = pod['containers'];
  if (!Array.isArray(containers) || containers.length === 0) errs.push(new FieldError('FieldValueRequired', `${at}.containers`, ''));
  else {
    (containers as Obj[]).forEach((c, i) => {
      if (!c?.['name']) errs.push(new FieldError('FieldValueRequired', `${at}.containers[${i}].name`, ''));
      if (!c?.['image']) errs.push(new FieldError('FieldValueRequired', `${at}.containers[${i}].image`, ''));
    });
  }
  // Pod defaulting turns an unset restartPolicy into Always, so both read as "required" here.
  const restart = pod['restartPolicy'];
  if (restart === undefined || restart === '' || restart === 'Always') {
    errs.push(new FieldError('FieldValueRequired', `${at}.restartPolicy`, 'valid values: "OnFailure", "Never"'));
  } else if (restart !== 'OnFailure' && restart !== 'Never') {
    errs.push(new FieldError('FieldValueNotSupported', `${at}.restartPolicy`, 'supported values: "OnFailure", "Never"', String(restart)));
  }
}

/** metav1.LabelSelector's generated String(), which field errors print it with. */
function selectorText(s: LabelSelectorSpec): GoValue {
  const labels = Object.keys(s.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${s.matchLabels![k]},`)
    .join('');
  const exprs = (s.matchExpressions ?? [])
    .map((e) => `&LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],},`)
    .join('');
  return new GoValue(`&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`);
}

/** ValidateGeneratedSelector: without manualSelector the template must carry the Job's name and uid labels, and the selector match them. */
function validateGeneratedSelector(job: KubeObject, errs: FieldError[]): void {
  const spec = obj(job['spec']);
  if (spec['manualSelector'] === true || !spec['selector']) return;
  const labels = (obj(obj(spec['template'])['metadata'])['labels'] ?? {}) as Record<string, string>;
  const expected: Record<string, string> = {};
  for (const key of CONTROLLER_UID_LABELS) expected[key] = job.metadata.uid ?? '';
  for (const key of JOB_NAME_LABELS) expected[key] = job.metadata.name ?? '';
  for (const [key, value] of Object.entries(expected)) {
    const at = `spec.template.metadata.labels[${key}]`;
    if (!(key in labels)) errs.push(new FieldError('FieldValueRequired', at, `must be '${value}'`));
    else if (labels[key] !== value) errs.push(new FieldError('FieldValueInvalid', at, `must be '${value}'`, goStringMap(labels)));
  }
  const selector = spec['selector'] as LabelSelectorSpec;
  if (!labelSelectorMatches(selector, expected)) errs.push(new FieldError('FieldValueInvalid', 'spec.selector', '`selector` not auto-generated', selectorText(selector)));
}

/**
 * Fields of a Job that may not change. While a Job is suspended and has never started, its
 * template's scheduling directives, labels and annotations may (AllowMutableSchedulingDirectives).
 */
function validateJobUpdate(job: KubeObject, old: KubeObject, errs: FieldError[]): void {
  const spec = obj(job['spec']);
  const oldSpec = obj(old['spec']);
  for (const key of ['completions', 'selector', 'completionMode']) {
    if (!isDeepStrictEqual(spec[key], oldSpec[key])) {
      const v = spec[key];
      errs.push(new FieldError('FieldValueInvalid', `spec.${key}`, IMMUTABLE, v && typeof v === 'object' ? selectorText(v as LabelSelectorSpec) : (v as string | number)));
    }
  }
  const template = structuredClone(obj(spec['template']));
  const oldTemplate = structuredClone(obj(oldSpec['template']));
  const neverStarted = oldSpec['suspend'] === true && !obj(old['status'])['startTime'];
  if (neverStarted) {
    for (const t of [template, oldTemplate]) {
      const meta = obj(t['metadata']);
      delete meta['labels'];
      delete meta['annotations'];
      const pod = obj(t['spec']);
      for (const key of ['nodeSelector', 'tolerations', 'affinity', 'schedulingGates']) delete pod[key];
    }
  }
  if (!isDeepStrictEqual(template, oldTemplate)) errs.push(new FieldError('FieldValueInvalid', 'spec.template', IMMUTABLE, new GoValue('core.PodTemplateSpec{...}')));
}

export function validateJob(job: KubeObject, old: KubeObject | undefined, errs: FieldError[]): void {
  if (!old && job.metadata.annotations?.[JOB_TRACKING_FINALIZER] !== undefined) {
    errs.push(new FieldError('FieldValueForbidden', `metadata.annotations[${JOB_TRACKING_FINALIZER}]`, 'cannot add this annotation'));
  }
  if (!old) validateGeneratedSelector(job, errs);
  const spec = obj(job['spec']);
  validateJobSpec(spec, 'spec', errs);
  const selector = spec['selector'] as LabelSelectorSpec | undefined;
  if (!selector) errs.push(new FieldError('FieldValueRequired', 'spec.selector', ''));
  else {
    const labels = obj(obj(spec['template'])['metadata'])['labels'] as Record<string, string> | undefined;
    if (!labelSelectorMatches(selector, labels)) {
      errs.push(new FieldError('FieldValueInvalid', 'spec.template.metadata.labels', '`selector` does not match template `labels`', goStringMap(labels)));
    }
  }
  if (old) validateJobUpdate(job, old, errs);
}

/** A standard five-field cron line or a @macro, as robfig/cron's standard parser takes it. */
const CRON_FIELD = /^(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(\/\d+)?(,(\*|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(\/\d+)?)*$/;
const CRON_MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

export function validateCronJob(cronJob: KubeObject, errs: FieldError[]): void {
  const spec = obj(cronJob['spec']);
  const schedule = spec['schedule'];
  if (typeof schedule !== 'string' || schedule === '') errs.push(new FieldError('FieldValueRequired', 'spec.schedule', ''));
  else {
    const fields = schedule.trim().split(/\s+/);
    const ok = CRON_MACROS.has(schedule.trim()) || (fields.length === 5 && fields.every((f) => CRON_FIELD.test(f)));
    if (!ok) errs.push(new FieldError('FieldValueInvalid', 'spec.schedule', `unparseable schedule: expected exactly 5 fields, found ${fields.length}: ${schedule}`, schedule));
    if (/TZ=|CRON_TZ=/.test(schedule)) errs.push(new FieldError('FieldValueInvalid', 'spec.schedule', 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead', schedule));
  }
  const policy = spec['concurrencyPolicy'];
  if (policy !== undefined && !['Allow', 'Forbid', 'Replace'].includes(String(policy))) {
    errs.push(new FieldError('FieldValueNotSupported', 'spec.concurrencyPolicy', 'supported values: "Allow", "Forbid", "Replace"', policy));
  }
  validateJobSpec(obj(obj(spec['jobTemplate'])['spec']), 'spec.jobTemplate.spec', errs);
}
