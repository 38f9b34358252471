/**
 * Emulator of the Datadog enrollment API (docs/protocol.md §3) and the runner health check (docs/protocol.md §7).
 * An independent reference implementation: it imports nothing else from src/ and verifies
 * PEMs and JWTs with node:crypto, so our client is checked by code not written around it.
 */
import type { FaultStep } from './fault-script.js';
import { FaultScript } from './fault-script.js';
import { type EnrollmentEmulatorOptions, type ResolvedEmulatorOptions, resolveOptions } from './options.js';
import { RequestLog, type RecordedRequest } from './request-log.js';
import type { CreatedConnection } from './connections.js';
import type { Route } from './routes.js';
import { type EnrolledRunner, RunnerRegistry } from './runner-registry.js';
import { closeServer, createListener, type EmulatorCore, listen, listenOnOtherLoopback, urlFor } from './server.js';

export { describeEmulator } from './describe.js';
export type { FaultStep } from './fault-script.js';
export {
  DEFAULT_API_KEY,
  DEFAULT_APP_KEY,
  DEFAULT_FORBIDDEN_APP_KEY,
  MAX_REQUEST_BODY_BYTES,
} from './options.js';
export type { RecordedRequest } from './request-log.js';
export { ROUTE_PATHS } from './routes.js';
export type { EnrolledRunner } from './runner-registry.js';

export interface EnrollmentEmulator {
  /** http://127.0.0.1:PORT — what the CLI gets as dd_url. */
  readonly url: string;
  /** Second listener on another loopback address: the cross-host redirect destination. */
  readonly otherHostUrl: string;
  /** False when no second loopback address could be bound and otherHostUrl differs by port only. */
  readonly otherHostIsDistinctAddress: boolean;
  readonly orgId: number;
  readonly options: ResolvedEmulatorOptions;
  /** Every request to either listener, oldest first (control API requests excluded). */
  readonly requests: RecordedRequest[];
  readonly runners: EnrolledRunner[];
  /** Connections created through POST /api/v2/actions/connections, oldest first. */
  readonly connections: CreatedConnection[];
  close(): Promise<void>;
  /** Marks a runner revoked; its JWTs are refused from then on. Throws for an unknown id. */
  revoke(runnerId: string): void;
  /** Queues fault steps, consumed one per request on that route; then normal behaviour. Throws on an invalid step. */
  script(route: Route, ...steps: FaultStep[]): void;
  /** Steps still queued for a route. */
  pendingFaults(route: Route): number;
  /** Clears the request log and fault scripts; enrolled runners too only with { runners: true }. */
  reset(opts?: { runners?: boolean }): void;
}

export async function startEnrollmentEmulator(options?: EnrollmentEmulatorOptions): Promise<EnrollmentEmulator> {
  const opts = resolveOptions(options);
  const log = new RequestLog();
  const registry = new RunnerRegistry();
  const faults = new FaultScript();
  const closing = new AbortController();
  let url = '';
  let otherHostUrl = '';
  let otherHostIsDistinctAddress = false;
  let closed: Promise<void> | undefined;

  const emulator: EnrollmentEmulator = {
    get url() {
      return url;
    },
    get otherHostUrl() {
      return otherHostUrl;
    },
    get otherHostIsDistinctAddress() {
      return otherHostIsDistinctAddress;
    },
    orgId: opts.orgId,
    options: opts,
    requests: log.entries,
    runners: registry.runners,
    connections: registry.connections,
    close() {
      closed ??= (async () => {
        closing.abort();
        await Promise.all([closeServer(main), closeServer(other)]);
      })();
      return closed;
    },
    revoke: (runnerId) => registry.revoke(runnerId),
    script: (route, ...steps) => faults.add(route, steps),
    pendingFaults: (route) => faults.pending(route),
    reset(resetOpts) {
      log.clear();
      faults.clear();
      if (resetOpts?.runners) registry.clear();
    },
  };

  const core: EmulatorCore = { opts, log, registry, faults, control: emulator, closing: closing.signal };
  const main = createListener('main', core);
  const other = createListener('other', core);
  try {
    const mainAddress = await listen(main, opts.host, opts.port);
    url = urlFor(mainAddress);
    const bound = await listenOnOtherLoopback(other, mainAddress.address);
    otherHostUrl = urlFor(bound.address);
    otherHostIsDistinctAddress = bound.distinctAddress;
  } catch (err) {
    await Promise.all([closeServer(main), closeServer(other)]);
    throw err;
  }
  return emulator;
}
