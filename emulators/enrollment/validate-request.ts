/**
 * Validation of an enrollment request (docs/protocol.md §3). Stricter than Datadog where the protocol
 * is exact: the point is to catch our client drifting from what the Go agent sends, so unknown
 * attributes (typos) and fields sent for the wrong flavor are rejected too.
 */
import type { KeyObject } from 'node:crypto';
import { checkPublicKeyPem } from './public-key-pem.js';
import type { AgentFlavor } from './runner-registry.js';

export interface ValidationError {
  detail: string;
  /** JSON pointer into the body, when the error is about a body member. */
  pointer?: string;
  /** Header name, when the error is about a header. */
  header?: string;
}

interface ValidEnrollment {
  name: string;
  modes: string[];
  runnerHost: string;
  publicKeyPem: string;
  publicKey: KeyObject;
  thumbprint: string;
  flavor: AgentFlavor;
  hostname: string | null;
  clusterId: string | null;
}

type EnrollmentCheck = { ok: true; enrollment: ValidEnrollment } | { ok: false; errors: ValidationError[] };

const KNOWN_ATTRIBUTES = new Set([
  'runner_name',
  'runner_modes',
  'runner_host',
  'public_key_pem',
  'agent_hostname',
  'orch_cluster_id',
  'agent_flavor',
]);

/** The agent's version.Version String(): N.N.N[-pre][+meta][(+|.)commit.X]. */
const AGENT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

export function validateEnrollmentHeaders(headers: Record<string, string>): ValidationError[] {
  const errors: ValidationError[] = [];
  const contentType = headers['content-type'];
  if (contentType === undefined) {
    errors.push({ header: 'Content-Type', detail: 'Content-Type header missing; expected application/vnd.api+json' });
  } else if (contentType.trim().toLowerCase() !== 'application/vnd.api+json') {
    errors.push({
      header: 'Content-Type',
      detail: `Content-Type must be application/vnd.api+json (without parameters), got ${JSON.stringify(contentType)}`,
    });
  }
  const accept = headers['accept'];
  if (accept === undefined) {
    errors.push({ header: 'Accept', detail: 'Accept header missing; expected application/json' });
  } else if (accept.trim().toLowerCase() !== 'application/json') {
    errors.push({ header: 'Accept', detail: `Accept must be application/json, got ${JSON.stringify(accept)}` });
  }
  const version = headers['x-datadog-onprem-version'];
  if (version === undefined || version.trim() === '') {
    errors.push({
      header: 'X-Datadog-OnPrem-Version',
      detail: 'X-Datadog-OnPrem-Version header missing or empty (the client version must be sent)',
    });
  } else if (!AGENT_VERSION.test(version)) {
    errors.push({
      header: 'X-Datadog-OnPrem-Version',
      detail: `X-Datadog-OnPrem-Version must be an agent version such as 7.66.0 or 7.66.0+commit.abc1234, got ${JSON.stringify(version.slice(0, 80))}`,
    });
  }
  if (headers['x-datadog-onprem-jwt'] !== undefined) {
    // Enrollment is what creates the key a JWT would be checked against; sending one means
    // the client reused a runtime code path (and may be leaking an old identity's token).
    errors.push({
      header: 'X-Datadog-OnPrem-JWT',
      detail: 'X-Datadog-OnPrem-JWT must not be sent on enrollment (enrollment authenticates with API keys only)',
    });
  }
  return errors;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

export function validateEnrollmentBody(body: Buffer): EnrollmentCheck {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return { ok: false, errors: [{ detail: 'request body is not valid UTF-8' }] };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { ok: false, errors: [{ detail: `request body is not valid JSON: ${(err as Error).message}` }] };
  }
  if (!isObject(doc)) return { ok: false, errors: [{ pointer: '', detail: 'request body must be a JSON object' }] };
  const data = doc['data'];
  if (!isObject(data)) return { ok: false, errors: [{ pointer: '/data', detail: 'data must be an object' }] };

  const errors: ValidationError[] = [];
  if (data['type'] !== 'createRunnerRequest') {
    errors.push({
      pointer: '/data/type',
      detail: `data.type must be "createRunnerRequest", got ${JSON.stringify(data['type']) ?? 'nothing'}`,
    });
  }
  if ('id' in data) {
    errors.push({ pointer: '/data/id', detail: 'data.id must be absent: the server assigns the runner id' });
  }
  const attrs = data['attributes'];
  if (!isObject(attrs)) {
    errors.push({ pointer: '/data/attributes', detail: 'data.attributes must be an object' });
    return { ok: false, errors };
  }
  const at = (name: string, detail: string): ValidationError => ({ pointer: `/data/attributes/${name}`, detail });

  for (const name of Object.keys(attrs)) {
    if (!KNOWN_ATTRIBUTES.has(name)) errors.push(at(name, `unknown attribute ${JSON.stringify(name)}`));
  }

  const name = attrs['runner_name'];
  if (!nonEmptyString(name)) errors.push(at('runner_name', 'runner_name must be a non-empty string'));

  const modes = attrs['runner_modes'];
  const modesOk = Array.isArray(modes) && modes.length === 1 && modes[0] === 'pull';
  if (!modesOk) {
    errors.push(at('runner_modes', `runner_modes must be exactly ["pull"], got ${JSON.stringify(modes) ?? 'nothing'}`));
  }

  const runnerHost = attrs['runner_host'];
  if (typeof runnerHost !== 'string') errors.push(at('runner_host', 'runner_host must be a string (may be empty)'));

  const pem = attrs['public_key_pem'];
  let pemResult: ReturnType<typeof checkPublicKeyPem> | undefined;
  if (typeof pem !== 'string') {
    errors.push(at('public_key_pem', 'public_key_pem must be a string'));
  } else {
    pemResult = checkPublicKeyPem(pem);
    if (!pemResult.ok) errors.push(at('public_key_pem', pemResult.reason));
  }

  const flavor = attrs['agent_flavor'];
  const hostname = attrs['agent_hostname'];
  const clusterId = attrs['orch_cluster_id'];
  if (flavor === 'private_action_runner') {
    if (!nonEmptyString(hostname)) {
      errors.push(at('agent_hostname', 'agent_hostname must be a non-empty string for agent_flavor private_action_runner'));
    }
    if ('orch_cluster_id' in attrs) {
      errors.push(at('orch_cluster_id', 'orch_cluster_id must be absent for agent_flavor private_action_runner'));
    }
  } else if (flavor === 'cluster_agent') {
    if (!nonEmptyString(clusterId)) {
      errors.push(at('orch_cluster_id', 'orch_cluster_id must be a non-empty string for agent_flavor cluster_agent'));
    }
    if ('agent_hostname' in attrs) {
      errors.push(at('agent_hostname', 'agent_hostname must be absent for agent_flavor cluster_agent'));
    }
  } else {
    errors.push(
      at('agent_flavor', `agent_flavor must be "private_action_runner" or "cluster_agent", got ${JSON.stringify(flavor) ?? 'nothing'}`),
    );
  }

  if (errors.length > 0 || !pemResult?.ok) return { ok: false, errors };
  return {
    ok: true,
    enrollment: {
      name: name as string,
      modes: ['pull'],
      runnerHost: runnerHost as string,
      publicKeyPem: pem as string,
      publicKey: pemResult.publicKey,
      thumbprint: pemResult.thumbprint,
      flavor: flavor as AgentFlavor,
      hostname: flavor === 'private_action_runner' ? (hostname as string) : null,
      clusterId: flavor === 'cluster_agent' ? (clusterId as string) : null,
    },
  };
}
