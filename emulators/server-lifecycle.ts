import type { Server } from 'node:net';

// What the small loopback emulators (agent IPC, cloud metadata, kubelet, docker daemon) share:
// replies that may be held back for a scripted delay, listeners on loopback only, and one close
// that stops every listener, drops open connections and cancels the replies still pending, so a
// test's scripted slowness never keeps the process alive.

interface ServerLifecycle {
  /** Calls `send` now, or after `delayMs` unless closed first. */
  reply(delayMs: number | undefined, send: () => void): void;
  /** Listens on 127.0.0.1 (an ephemeral port) or on a unix socket path; resolves with the port (0 for a socket). */
  listen(server: Server, socketPath?: string): Promise<number>;
  /** Idempotent. */
  close(): Promise<void>;
}

type ClosableServer = Server & { closeAllConnections?: () => void };

export function serverLifecycle(): ServerLifecycle {
  const timers = new Set<NodeJS.Timeout>();
  const servers: ClosableServer[] = [];
  let closed: Promise<void> | undefined;
  return {
    reply(delayMs, send) {
      if (!delayMs) return send();
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, delayMs);
      timers.add(timer);
    },
    listen(server, socketPath) {
      servers.push(server);
      return new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        const ready = () => {
          const address = server.address();
          resolve(typeof address === 'object' && address ? address.port : 0);
        };
        if (socketPath) server.listen(socketPath, ready);
        else server.listen(0, '127.0.0.1', ready);
      });
    },
    close() {
      closed ??= (async () => {
        for (const timer of timers) clearTimeout(timer);
        await Promise.all(
          servers.map(
            (server) =>
              new Promise<void>((resolve) => {
                server.close(() => resolve());
                server.closeAllConnections?.();
              }),
          ),
        );
      })();
      return closed;
    },
  };
}
