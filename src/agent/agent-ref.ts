import { UsageError } from '../errors.js';
import { sanitizeServerString } from '../sanitize.js';

// --agent's value, parsed where the command line is read: nothing of the Kubernetes client is loaded for it.

/** `deployment/NAME` (or `deploy/`, `deployments/`) → NAME. */
export function parseAgentRef(ref: string): string {
  const match = /^(?:deployment|deployments|deploy)(?:\.apps)?\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(ref);
  if (!match?.[1])
    throw new UsageError(`--agent must be deployment/NAME (the cluster agent's Deployment), not ${sanitizeServerString(ref, 80)}`);
  return match[1];
}
