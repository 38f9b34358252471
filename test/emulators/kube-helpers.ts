import { execFileSync } from 'node:child_process';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';
import { type KubeEmulator, type KubeEmulatorOptions, seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';

export async function startSeeded(opts: KubeEmulatorOptions = {}): Promise<KubeEmulator> {
  const emu = await startKubeEmulator(opts);
  seedNamespaces(emu, ['default', 'kube-system', 'ns1', 'ns2']);
  return emu;
}

export function kubeConfigFor(emu: KubeEmulator, token?: string, namespace?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(emu.kubeconfig({ token, namespace }));
  return kc;
}

const agents = new WeakMap<KubeEmulator, Agent>();

function agentFor(emu: KubeEmulator): Agent {
  let a = agents.get(emu);
  if (!a) {
    a = new Agent({ connect: emu.caCert ? { ca: emu.caCert } : {} });
    agents.set(emu, a);
  }
  return a;
}

/** Decoded wire JSON; tests pin its shape with assertions. */
// biome-ignore lint/suspicious/noExplicitAny: wire JSON is checked field by field by the assertions
export type Wire = any;

export interface CallResult {
  status: number;
  body: Wire;
  contentType: string;
  warning: string | null;
}

/** A raw API call, for checking exact wire shapes. */
export async function call(
  emu: KubeEmulator,
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; contentType?: string; accept?: string } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? emu.adminToken : opts.token;
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  if (opts.body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  if (opts.accept) headers['accept'] = opts.accept;
  const res = await fetch(emu.url + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
    dispatcher: agentFor(emu),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // non-JSON bodies (healthz) stay text
  }
  return { status: res.status, body, contentType: res.headers.get('content-type') ?? '', warning: res.headers.get('warning') };
}

export interface WatchEvent {
  type: string;
  object: Wire;
}

/** An open raw watch stream that hands out events as they arrive. */
export class RawWatch {
  readonly events: WatchEvent[] = [];
  ended = false;
  error: unknown;
  private waiters: Array<() => void> = [];
  private readonly controller = new AbortController();
  status = 0;

  static async open(emu: KubeEmulator, path: string, token?: string): Promise<RawWatch> {
    const w = new RawWatch();
    const res = await fetch(emu.url + path, {
      headers: { authorization: `Bearer ${token ?? emu.adminToken}` },
      dispatcher: agentFor(emu),
      signal: w.controller.signal,
    });
    w.status = res.status;
    void w.pump(res.body!);
    return w;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of body) {
        buf += decoder.decode(chunk, { stream: true });
        let nl = buf.indexOf('\n');
        while (nl >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) this.events.push(JSON.parse(line));
          nl = buf.indexOf('\n');
        }
        this.wake();
      }
    } catch (e) {
      this.error = e;
    }
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  /** Resolves once `n` events have arrived (or rejects if the stream ends first / time runs out). */
  async waitFor(n: number, timeoutMs = 5000): Promise<WatchEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < n) {
      if (this.ended)
        throw new Error(`watch ended after ${this.events.length} events, wanted ${n}: ${JSON.stringify(this.events.map((e) => e.type))}`);
      if (Date.now() > deadline) throw new Error(`timed out with ${this.events.length} events, wanted ${n}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.events.slice(0, n);
  }

  async waitEnd(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('watch did not end');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.controller.abort();
  }
}

/** Resolves once `check()` holds, polling the event loop; the test's own timeout bounds the wait. */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

export function parseErrorBody(e: unknown): Wire {
  const body = (e as { body?: unknown }).body;
  return typeof body === 'string' ? JSON.parse(body) : body;
}

export function secret(name: string, namespace = 'default', data: Record<string, string> = { k: 'dg==' }) {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'Opaque', data };
}

export function deployment(name: string, namespace = 'default', image = 'nginx:1.27') {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: 'main',
              image,
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
            },
          ],
        },
      },
    },
  };
}

/** kubectl from PATH, if any (tests that need it skip without it unless CI=true). */
export function findKubectl(): string | undefined {
  try {
    return execFileSync('which', ['kubectl'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}
