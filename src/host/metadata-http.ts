import { request } from 'node:http';
import { boundedExchange, type SmallAnswer } from './bounded-exchange.js';

// Plain-HTTP calls to the link-local metadata service. Never through a proxy (the agent bypasses it
// for 169.254.169.254 unless use_proxy_for_cloud_metadata, which this tool does not support), never
// retried, and bounded by the provider's own timeout, so a host outside any cloud pays at most that.

/** Where cloud metadata lives; PAR_IDENTITY_CLOUD_METADATA_URL (test/debug only) replaces it. */
const DEFAULT_METADATA_URL = 'http://169.254.169.254';

export function metadataBaseUrl(env: NodeJS.ProcessEnv): string {
  const override = env.PAR_IDENTITY_CLOUD_METADATA_URL?.trim();
  return (override || DEFAULT_METADATA_URL).replace(/\/+$/, '');
}

type MetadataAnswer = SmallAnswer;

export function metadataRequest(
  method: 'GET' | 'PUT',
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<MetadataAnswer> {
  return boundedExchange(
    (onResponse) => request(url, { method, headers, timeout: timeoutMs, agent: false }, onResponse),
    timeoutMs,
    'metadata',
  );
}
