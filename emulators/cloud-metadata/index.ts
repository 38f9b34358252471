/**
 * Emulator of the cloud metadata services the agent's hostname chain reads (docs/protocol.md §4): EC2 IMDS
 * (v1, and v2 with a session token), GCE (Metadata-Flavor: Google) and Azure IMDS (Metadata: true),
 * all on one loopback listener, as they all live on 169.254.169.254. Tests point
 * PAR_IDENTITY_CLOUD_METADATA_URL at it. Each provider is scriptable: present, absent (404, as the
 * metadata service of another cloud answers; for no service at all use closedLoopbackUrl()), or slow.
 * Imports nothing from the product.
 */

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serverLifecycle } from '../server-lifecycle.js';

interface Ec2State {
  instanceId: string;
  /** `optional` (IMDSv1 and v2 both work, the AWS default), `required` (v1 answers 401), `v1-only` (no token endpoint). */
  imdsv2?: 'optional' | 'required' | 'v1-only';
  hostname?: string;
}

interface GceState {
  hostname: string;
}

interface AzureState {
  vmId: string;
  name: string;
  resourceGroupName: string;
  subscriptionId: string;
}

interface CloudMetadataState {
  ec2?: Ec2State;
  gce?: GceState;
  azure?: AzureState;
  /** Delay before every answer, per provider: a slow metadata service. */
  delayMs?: { ec2?: number; gce?: number; azure?: number };
}

interface MetadataRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  provider: 'ec2' | 'gce' | 'azure' | 'unknown';
  status: number;
}

export interface CloudMetadataEmulator {
  /** http://127.0.0.1:PORT — the value for PAR_IDENTITY_CLOUD_METADATA_URL. */
  readonly url: string;
  readonly requests: MetadataRequest[];
  /** Replaces the whole scripted state. */
  set(state: CloudMetadataState): void;
  close(): Promise<void>;
}

function providerOf(path: string): MetadataRequest['provider'] {
  if (path.startsWith('/latest/')) return 'ec2';
  if (path.startsWith('/computeMetadata/')) return 'gce';
  if (path.startsWith('/metadata/')) return 'azure';
  return 'unknown';
}

interface Answer {
  status: number;
  body: string;
  type?: string;
}

const text = (status: number, body: string): Answer => ({ status, body });

function answerEc2(req: IncomingMessage, path: string, ec2: Ec2State | undefined, tokens: Set<string>): Answer {
  if (!ec2) return text(404, 'Not Found');
  const mode = ec2.imdsv2 ?? 'optional';
  if (path === '/latest/api/token') {
    if (req.method !== 'PUT') return text(405, 'Method Not Allowed');
    if (mode === 'v1-only') return text(404, 'Not Found');
    const ttl = Number(req.headers['x-aws-ec2-metadata-token-ttl-seconds']);
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > 21600) return text(400, 'Bad Request');
    const token = randomBytes(24).toString('base64url');
    tokens.add(token);
    return text(200, token);
  }
  if (req.method !== 'GET') return text(405, 'Method Not Allowed');
  const token = req.headers['x-aws-ec2-metadata-token'];
  if (token !== undefined && !tokens.has(String(token))) return text(401, 'Unauthorized');
  if (token === undefined && mode === 'required') return text(401, 'Unauthorized');
  if (path === '/latest/meta-data/instance-id') return text(200, ec2.instanceId);
  if (path === '/latest/meta-data/hostname' && ec2.hostname) return text(200, ec2.hostname);
  return text(404, 'Not Found');
}

function answerGce(req: IncomingMessage, path: string, gce: GceState | undefined): Answer {
  if (!gce) return text(404, 'Not Found');
  if (req.headers['metadata-flavor'] !== 'Google') return text(403, 'Missing Metadata-Flavor:Google header.');
  if (req.method !== 'GET') return text(405, 'Method Not Allowed');
  if (path === '/computeMetadata/v1/instance/hostname') return text(200, gce.hostname);
  return text(404, 'Not Found');
}

function answerAzure(req: IncomingMessage, path: string, query: URLSearchParams, azure: AzureState | undefined): Answer {
  if (!azure) return text(404, 'Not Found');
  if (req.headers.metadata !== 'true')
    return { status: 400, type: 'application/json', body: '{"error":"Bad request. Required metadata header not specified"}' };
  if (!query.get('api-version'))
    return { status: 400, type: 'application/json', body: '{"error":"Bad request. api-version was not specified in the request"}' };
  if (path === '/metadata/instance/compute') {
    return { status: 200, type: 'application/json', body: JSON.stringify({ location: 'westeurope', osType: 'Linux', ...azure }) };
  }
  return text(404, 'Not Found');
}

export async function startCloudMetadataEmulator(initial: CloudMetadataState = {}): Promise<CloudMetadataEmulator> {
  let state = initial;
  const requests: MetadataRequest[] = [];
  const tokens = new Set<string>();
  const life = serverLifecycle();

  const respond = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://metadata');
    const provider = providerOf(url.pathname);
    let answer: Answer;
    if (provider === 'ec2') answer = answerEc2(req, url.pathname, state.ec2, tokens);
    else if (provider === 'gce') answer = answerGce(req, url.pathname, state.gce);
    else if (provider === 'azure') answer = answerAzure(req, url.pathname, url.searchParams, state.azure);
    else answer = text(404, 'Not Found');
    requests.push({
      method: req.method ?? '',
      path: url.pathname + url.search,
      headers: { ...req.headers },
      provider,
      status: answer.status,
    });
    const delay = provider === 'unknown' ? 0 : (state.delayMs?.[provider] ?? 0);
    life.reply(Math.max(0, delay), () => {
      if (res.destroyed) return;
      res.writeHead(answer.status, { 'Content-Type': answer.type ?? 'text/plain' });
      res.end(answer.body);
    });
  };

  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => respond(req, res));
  });
  const port = await life.listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    set(next) {
      state = next;
    },
    close: life.close,
  };
}

/** A loopback port nothing listens on: cloud metadata "absent" the way a non-cloud host sees it (connection refused). */
export async function closedLoopbackUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
