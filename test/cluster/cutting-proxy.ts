import { readFile } from 'node:fs/promises';
import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { parse } from 'yaml';
import { servingCert } from '../../emulators/kube/tls.js';

// A TLS-terminating proxy in front of an apiserver (real or emulated) that forwards every request as
// it came (bearer token included) and, for the one request a test names, lets the apiserver apply it
// and then cuts the client's connection before any reply: the client sees a reset after its write
// landed, the "unknown outcome" a real network produces. No apiserver fault hook is needed, so the
// same test runs on the real control plane.

export interface CuttingProxy {
  url: string;
  caCert: string;
  /** Cut the reply to the next request matching this (after the apiserver answered it). */
  cutNext(match: (method: string, path: string) => boolean): Promise<void>;
  /** Hold every request matching this without forwarding or answering it: a hung apiserver. */
  stall(match: (method: string, path: string) => boolean): { hits: number };
  /** A kubeconfig for the proxy, with the same bearer token as the given one. */
  kubeconfigFrom(kubeconfig: string): Promise<string>;
  close(): Promise<void>;
}

export async function startCuttingProxy(upstreamKubeconfig: string): Promise<CuttingProxy> {
  const upstream = parse(await readFile(upstreamKubeconfig, 'utf8'));
  const cluster = upstream.clusters[0].cluster as { server: string; 'certificate-authority-data'?: string };
  const upstreamCa = cluster['certificate-authority-data']
    ? Buffer.from(cluster['certificate-authority-data'], 'base64').toString()
    : undefined;
  const target = new URL(cluster.server);
  const cert = await servingCert();
  const pending: Array<{ match: (m: string, p: string) => boolean; done: () => void }> = [];
  const sockets = new Set<Socket>();
  const stalls: Array<{ match: (m: string, p: string) => boolean; hits: number }> = [];
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const stalled = stalls.find((s) => s.match(req.method ?? '', req.url ?? ''));
    if (stalled) {
      // Neither forwarded nor answered: the socket stays open until the client gives up or close().
      stalled.hits++;
      req.resume();
      return;
    }
    const i = pending.findIndex((p) => p.match(req.method ?? '', req.url ?? ''));
    const cut = i >= 0 ? pending.splice(i, 1)[0] : undefined;
    const headers = { ...req.headers, host: target.host };
    const up = httpsRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, ca: upstreamCa },
      (upRes) => {
        if (cut) {
          // The apiserver has answered: the write is applied (or refused). Read the answer to its
          // end, then drop the client's connection without a byte of it.
          upRes.resume();
          upRes.on('end', () => {
            req.socket.destroy();
            cut.done();
          });
          return;
        }
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    caCert: cert.cert,
    cutNext(match) {
      return new Promise<void>((resolve) => pending.push({ match, done: resolve }));
    },
    stall(match) {
      const entry = { match, hits: 0 };
      stalls.push(entry);
      return entry;
    },
    async kubeconfigFrom(kubeconfig) {
      const kc = parse(await readFile(kubeconfig, 'utf8'));
      kc.clusters[0].cluster = { server: url, 'certificate-authority-data': Buffer.from(cert.cert).toString('base64') };
      return JSON.stringify(kc);
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
