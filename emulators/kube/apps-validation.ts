import { goIntOrString, INVALID_PERCENT_MESSAGE, intOrPercentValue, isValidPercent, percentValue } from './intstr.js';
import { FieldError, GoValue } from './status-errors.js';
import type { KubeObject } from './types.js';

type Obj = Record<string, unknown>;

const NEGATIVE = 'must be greater than or equal to 0';

function obj(v: unknown): Obj | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

function nonNegative(value: unknown, field: string, errs: FieldError[]): void {
  if (typeof value === 'number' && value < 0) errs.push(new FieldError('FieldValueInvalid', field, NEGATIVE, value));
}

/** ValidatePositiveIntOrPercent: a non-negative int or a valid percent string. */
function positiveIntOrPercent(value: unknown, field: string, errs: FieldError[]): void {
  if (typeof value === 'string') {
    if (!isValidPercent(value)) errs.push(new FieldError('FieldValueInvalid', field, INVALID_PERCENT_MESSAGE, new GoValue(goIntOrString(value))));
  } else if (typeof value === 'number') {
    nonNegative(value, field, errs);
  }
}

/** IsNotMoreThan100Percent. */
function notMoreThan100Percent(value: unknown, field: string, errs: FieldError[]): void {
  const pct = percentValue(value);
  if (pct !== undefined && pct > 100) {
    errs.push(new FieldError('FieldValueInvalid', field, 'must not be greater than 100%', new GoValue(goIntOrString(value))));
  }
}

/** ValidateRollingUpdateDaemonSet: exactly one of maxSurge and maxUnavailable is non-zero. */
function daemonSetRollingUpdate(ru: Obj, path: string, errs: FieldError[]): void {
  const maxUnavailable = ru['maxUnavailable'];
  const maxSurge = ru['maxSurge'];
  positiveIntOrPercent(maxUnavailable, `${path}.maxUnavailable`, errs);
  positiveIntOrPercent(maxSurge, `${path}.maxSurge`, errs);
  notMoreThan100Percent(maxUnavailable, `${path}.maxUnavailable`, errs);
  notMoreThan100Percent(maxSurge, `${path}.maxSurge`, errs);
  const hasUnavailable = intOrPercentValue(maxUnavailable) !== 0;
  const hasSurge = intOrPercentValue(maxSurge) !== 0;
  if (hasUnavailable && hasSurge) {
    errs.push(
      new FieldError('FieldValueInvalid', `${path}.maxSurge`, 'may not be set when maxUnavailable is non-zero', new GoValue(goIntOrString(maxSurge))),
    );
  } else if (!hasUnavailable && !hasSurge) {
    errs.push(new FieldError('FieldValueRequired', `${path}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
  }
}

function goStrategy(type: string, strategy: Obj, pointerType: string, key: string): GoValue {
  const pointer = strategy[key] === undefined || strategy[key] === null ? `(*apps.${pointerType})(nil)` : `(*apps.${pointerType})(0xc000000000)`;
  return new GoValue(`{Type:${JSON.stringify(type)}, RollingUpdate:${pointer}}`);
}

function validateDaemonSet(spec: Obj, errs: FieldError[]): void {
  const template = obj(spec['template']);
  const restartPolicy = obj(template?.['spec'])?.['restartPolicy'];
  if (restartPolicy !== undefined && restartPolicy !== 'Always') {
    errs.push(new FieldError('FieldValueNotSupported', 'spec.template.spec.restartPolicy', 'supported values: "Always"', restartPolicy));
  }
  nonNegative(spec['minReadySeconds'], 'spec.minReadySeconds', errs);
  const strategy = obj(spec['updateStrategy']) ?? {};
  const type = strategy['type'];
  if (type === 'RollingUpdate') {
    const ru = obj(strategy['rollingUpdate']);
    if (!ru) errs.push(new FieldError('FieldValueRequired', 'spec.updateStrategy.rollingUpdate', ''));
    else daemonSetRollingUpdate(ru, 'spec.updateStrategy.rollingUpdate', errs);
  } else if (type !== 'OnDelete') {
    const bad = goStrategy(String(type ?? ''), strategy, 'RollingUpdateDaemonSet', 'rollingUpdate');
    errs.push(
      new FieldError(
        'FieldValueNotSupported',
        'spec.updateStrategy',
        'supported values: "RollingUpdate", "OnDelete"',
        new GoValue(`apps.DaemonSetUpdateStrategy${bad}`),
      ),
    );
  }
  nonNegative(spec['revisionHistoryLimit'], 'spec.revisionHistoryLimit', errs);
}

function validateDeployment(spec: Obj, errs: FieldError[]): void {
  const strategy = obj(spec['strategy']) ?? {};
  const type = strategy['type'];
  const path = 'spec.strategy.rollingUpdate';
  if (type === 'Recreate') {
    if (strategy['rollingUpdate'] !== undefined && strategy['rollingUpdate'] !== null) {
      errs.push(new FieldError('FieldValueForbidden', path, "may not be specified when strategy `type` is 'Recreate'"));
    }
  } else if (type === 'RollingUpdate') {
    const ru = obj(strategy['rollingUpdate']);
    if (!ru) errs.push(new FieldError('FieldValueRequired', path, 'this should be defaulted and never be nil'));
    else {
      positiveIntOrPercent(ru['maxUnavailable'], `${path}.maxUnavailable`, errs);
      positiveIntOrPercent(ru['maxSurge'], `${path}.maxSurge`, errs);
      if (intOrPercentValue(ru['maxUnavailable']) === 0 && intOrPercentValue(ru['maxSurge']) === 0) {
        errs.push(
          new FieldError(
            'FieldValueInvalid',
            `${path}.maxUnavailable`,
            'may not be 0 when `maxSurge` is 0',
            new GoValue(goIntOrString(ru['maxUnavailable'])),
          ),
        );
      }
      notMoreThan100Percent(ru['maxUnavailable'], `${path}.maxUnavailable`, errs);
    }
  } else {
    const bad = goStrategy(String(type ?? ''), strategy, 'RollingUpdateDeployment', 'rollingUpdate');
    errs.push(
      new FieldError('FieldValueNotSupported', 'spec.strategy', 'supported values: "Recreate", "RollingUpdate"', new GoValue(`apps.DeploymentStrategy${bad}`)),
    );
  }
  const minReady = spec['minReadySeconds'];
  nonNegative(minReady, 'spec.minReadySeconds', errs);
  nonNegative(spec['revisionHistoryLimit'], 'spec.revisionHistoryLimit', errs);
  const deadline = spec['progressDeadlineSeconds'];
  if (typeof deadline === 'number') {
    nonNegative(deadline, 'spec.progressDeadlineSeconds', errs);
    if (deadline <= (typeof minReady === 'number' ? minReady : 0)) {
      errs.push(new FieldError('FieldValueInvalid', 'spec.progressDeadlineSeconds', 'must be greater than minReadySeconds', deadline));
    }
  }
}

/**
 * The strategy rules of pkg/apis/apps/validation for DaemonSets and Deployments (after defaulting),
 * with the apiserver's wording and value formatting.
 */
export function validateAppsStrategy(kind: string, object: KubeObject, errs: FieldError[]): void {
  const spec = obj(object['spec']) ?? {};
  if (kind === 'DaemonSet') validateDaemonSet(spec, errs);
  else if (kind === 'Deployment') validateDeployment(spec, errs);
}
