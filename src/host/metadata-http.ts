import { request } from 'node:http';

// Plain-HTTP calls to the link-local metadata service. Never through a proxy (the agent bypasses it
// for 169.254.169.254 unless use_proxy_for_cloud_metadata, which this tool does not support), never
// retried, and bounded by the provider's own timeout, so a host outside any cloud pays at most that.

/** Where cloud metadata lives; PAR_IDENTITY_CLOUD_METADATA_URL (test/debug only) replaces it. */
export const DEFAULT_METADATA_URL = 'http://169.254.169.254';

export function metadataBaseUrl(env: NodeJS.ProcessEnv): string {
  const override = env.PAR_IDENTITY_CLOUD_METADATA_URL?.trim();
  return (override || DEFAULT_METADATA_URL).replace(/\/+$/, '');
}

const MAX_BODY = 64 * 1024;

export interface MetadataAnswer {
  status: number;
  body: string;
}

export function metadataRequest(method: 'GET' | 'PUT', url: string, headers: Record<string, string>, timeoutMs: number): Promise<MetadataAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, timeout: timeoutMs, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY) {
          req.destroy(new Error(`metadata answer larger than ${MAX_BODY} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // `timeout` only covers socket idleness: a hard deadline bounds the whole exchange.
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}
