import { isoString } from '../time/index.js';

// The enrollment request exactly as the Go agent sends it (docs/protocol.md §3).

export type AgentFlavor = 'private_action_runner' | 'cluster_agent';

export interface EnrollmentInput {
  baseUrl: string;
  apiKey: string;
  /** Absent for api-key-only enrollment. */
  appKey?: string;
  apiKeyOnly: boolean;
  flavor: AgentFlavor;
  runnerNamePrefix: string;
  hostname?: string;
  clusterId?: string;
  publicKeyPem: string;
  version: string;
  extraHeaders: Record<string, string>;
  now: Date;
}

interface PreparedRequest {
  url: string;
  /** runner_name as sent: connections are named after it. */
  runnerName: string;
  headers: Record<string, string>;
  body: string;
}

/** UTC YYYYMMDDHHMMSS, the suffix the Go agent puts on runner names. */
export function runnerNameSuffix(now: Date): string {
  return isoString(now).replace(/[-:T]/g, '').slice(0, 14);
}

export function enrollmentPath(apiKeyOnly: boolean): string {
  return apiKeyOnly ? '/api/unstable/on_prem_runners/api_key_only' : '/api/unstable/on_prem_runners';
}

/**
 * Sets each header, replacing one of the same name in any letter case: header names are
 * case-insensitive, and a plain object merge would send both `Accept` and `accept`.
 */
export function setHeaders(target: Record<string, string>, entries: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(entries)) {
    for (const existing of Object.keys(target)) {
      if (existing.toLowerCase() === name.toLowerCase()) delete target[existing];
    }
    target[name] = value;
  }
  return target;
}

export function buildEnrollmentRequest(input: EnrollmentInput): PreparedRequest {
  const headers: Record<string, string> = {
    'Content-Type': 'application/vnd.api+json',
    Accept: 'application/json',
    'DD-API-KEY': input.apiKey,
  };
  if (!input.apiKeyOnly && input.appKey) headers['DD-APPLICATION-KEY'] = input.appKey;
  headers['X-Datadog-OnPrem-Version'] = input.version;
  setHeaders(headers, input.extraHeaders);

  const runnerName = `${input.runnerNamePrefix}-${runnerNameSuffix(input.now)}`;
  const attributes: Record<string, unknown> = {
    runner_name: runnerName,
    runner_modes: ['pull'],
    runner_host: '',
    public_key_pem: input.publicKeyPem,
  };
  if (input.flavor === 'private_action_runner') attributes.agent_hostname = input.hostname ?? '';
  else attributes.orch_cluster_id = input.clusterId ?? '';
  attributes.agent_flavor = input.flavor;
  return {
    url: `${input.baseUrl}${enrollmentPath(input.apiKeyOnly)}`,
    runnerName,
    headers,
    body: JSON.stringify({ data: { type: 'createRunnerRequest', attributes } }),
  };
}
