import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_ACCOUNT_DIR } from '../config/runtime-environment.js';

// The in-cluster service account's files, apart from the cluster resolver: choosing the Secret's
// namespace needs them on paths that never talk to a cluster.

/** Test hook: a directory standing in for / when looking for the service-account files. */
export function serviceAccountDir(env: NodeJS.ProcessEnv): string {
  return `${env.PAR_IDENTITY_SA_ROOT ?? ''}${SERVICE_ACCOUNT_DIR}`;
}

export function serviceAccountNamespace(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return readFileSync(join(serviceAccountDir(env), 'namespace'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
