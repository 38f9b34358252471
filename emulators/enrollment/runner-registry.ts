/**
 * Runners enrolled so far. As on Datadog, enrolling never revokes an earlier runner: old and new
 * identities both stay valid until someone revokes one, which is what a rotation must cope with.
 */
import type { KeyObject } from 'node:crypto';
import type { CreatedConnection } from './connections.js';

export type AgentFlavor = 'private_action_runner' | 'cluster_agent';
export type EnrollmentRoute = 'enroll' | 'enroll_api_key_only';

export interface EnrolledRunner {
  runnerId: string;
  orgId: number;
  /** runner_name as sent. */
  name: string;
  flavor: AgentFlavor;
  /** agent_hostname, null for the cluster agent. */
  hostname: string | null;
  /** orch_cluster_id, null for a standalone/node runner. */
  clusterId: string | null;
  runnerHost: string;
  modes: string[];
  publicKeyPem: string;
  /** RFC 7638 thumbprint of the public key: the same fingerprint the CLI prints for an identity. */
  publicKeyThumbprint: string;
  enrolledVia: EnrollmentRoute;
  /** Epoch milliseconds. */
  enrolledAt: number;
  revoked: boolean;
}

interface NewRunner extends Omit<EnrolledRunner, 'revoked'> {
  publicKey: KeyObject;
}

export class RunnerRegistry {
  readonly runners: EnrolledRunner[] = [];
  /** Connections created for enrolled runners (POST /api/v2/actions/connections). */
  readonly connections: CreatedConnection[] = [];
  readonly #keys = new Map<string, KeyObject>();

  add(runner: NewRunner): EnrolledRunner {
    const { publicKey, ...fields } = runner;
    if (this.#keys.has(fields.runnerId)) throw new Error(`runner ${fields.runnerId} is already enrolled`);
    const entry: EnrolledRunner = { ...fields, revoked: false };
    this.runners.push(entry);
    this.#keys.set(entry.runnerId, publicKey);
    return entry;
  }

  find(runnerId: string): { runner: EnrolledRunner; publicKey: KeyObject } | undefined {
    const publicKey = this.#keys.get(runnerId);
    const runner = this.runners.find((r) => r.runnerId === runnerId);
    return publicKey && runner ? { runner, publicKey } : undefined;
  }

  /** Throws for an unknown id so a test that revokes the wrong runner fails loudly. */
  revoke(runnerId: string): void {
    const found = this.find(runnerId);
    if (!found) throw new Error(`no enrolled runner with id ${JSON.stringify(runnerId)}`);
    found.runner.revoked = true;
  }

  clear(): void {
    this.runners.length = 0;
    this.connections.length = 0;
    this.#keys.clear();
  }
}
