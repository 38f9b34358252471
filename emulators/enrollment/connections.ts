/**
 * POST /api/v2/actions/connections: the connections the agent creates for a freshly enrolled
 * runner (pkg/privateactionrunner/autoconnections). Strict on the body the agent marshals, so a
 * client that drifts from it is caught: JSON:API client mode, exactly four attributes, the name
 * "<IntegrationType> (<runner_name>)", a runner that exists, and the credentials of its type.
 */
import { randomUUID } from 'node:crypto';
import type { ResolvedEmulatorOptions } from './options.js';
import { jsonApiErrors, plainErrors, type Reply } from './reply.js';
import type { RunnerRegistry } from './runner-registry.js';
import type { ValidationError } from './validate-request.js';

export interface CreatedConnection {
  connectionId: string;
  runnerId: string;
  name: string;
  integrationType: 'Kubernetes' | 'Script';
  credentials: Record<string, unknown>;
  tags: string[];
  userAgent?: string;
}

const ATTRIBUTES = ['name', 'runner_id', 'tags', 'integration'];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkCredentialsShape(type: unknown, credentials: unknown, errors: ValidationError[]): void {
  const at = (detail: string): ValidationError => ({ pointer: '/data/attributes/integration/credentials', detail });
  if (!isObject(credentials)) {
    errors.push(at('credentials must be an object'));
    return;
  }
  if (type === 'Kubernetes') {
    if (JSON.stringify(credentials) !== '{"type":"KubernetesServiceAccount"}')
      errors.push(at('Kubernetes credentials must be exactly {"type":"KubernetesServiceAccount"}'));
  } else if (type === 'Script') {
    const keys = Object.keys(credentials).sort().join(',');
    const location = credentials['configFileLocation'];
    if (keys !== 'configFileLocation,type' || credentials['type'] !== 'Script')
      errors.push(at('Script credentials must be exactly {"configFileLocation":…,"type":"Script"}'));
    else if (typeof location !== 'string' || !location.startsWith('/') || !location.endsWith('/private-action-runner/script-config.yaml')) {
      errors.push(at('configFileLocation must be an absolute path ending in /private-action-runner/script-config.yaml'));
    }
  } else {
    errors.push({
      pointer: '/data/attributes/integration/type',
      detail: `integration.type must be "Kubernetes" or "Script", got ${JSON.stringify(type) ?? 'nothing'}`,
    });
  }
}

export function handleConnection(
  headers: Record<string, string>,
  body: Buffer,
  opts: ResolvedEmulatorOptions,
  registry: RunnerRegistry,
  created: CreatedConnection[],
): Reply {
  const apiKey = headers['dd-api-key'];
  if (!apiKey || !opts.apiKeys.includes(apiKey)) return plainErrors(401, 'DD-API-KEY missing or not valid');
  const appKey = headers['dd-application-key'];
  if (!appKey) return plainErrors(401, 'DD-APPLICATION-KEY missing (connections need an application key)');
  if (opts.forbiddenAppKeys.includes(appKey)) return plainErrors(403, 'DD-APPLICATION-KEY lacks the connections scope');
  if (!opts.appKeys.includes(appKey)) return plainErrors(401, 'DD-APPLICATION-KEY is not a valid application key');

  const errors: ValidationError[] = [];
  if ((headers['content-type'] ?? '').trim().toLowerCase() !== 'application/vnd.api+json') {
    errors.push({ header: 'Content-Type', detail: 'Content-Type must be application/vnd.api+json' });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return jsonApiErrors(400, [...errors, { detail: 'request body is not valid JSON' }]);
  }
  const data = isObject(doc) ? doc['data'] : undefined;
  if (!isObject(doc) || Object.keys(doc).join(',') !== 'data' || !isObject(data))
    return jsonApiErrors(400, [...errors, { pointer: '/data', detail: 'body must be {"data":{…}}' }]);
  if (data['type'] !== 'action_connection')
    errors.push({
      pointer: '/data/type',
      detail: `data.type must be "action_connection", got ${JSON.stringify(data['type']) ?? 'nothing'}`,
    });
  if ('id' in data) errors.push({ pointer: '/data/id', detail: 'data.id must be absent (client mode)' });
  const attrs = data['attributes'];
  if (!isObject(attrs))
    return jsonApiErrors(400, [...errors, { pointer: '/data/attributes', detail: 'data.attributes must be an object' }]);
  const keys = Object.keys(attrs);
  if (keys.join(',') !== ATTRIBUTES.join(','))
    errors.push({
      pointer: '/data/attributes',
      detail: `attributes must be exactly ${ATTRIBUTES.join(', ')} in that order, got ${keys.join(', ')}`,
    });

  const runnerId = attrs['runner_id'];
  const found = typeof runnerId === 'string' ? registry.find(runnerId) : undefined;
  if (!found)
    errors.push({ pointer: '/data/attributes/runner_id', detail: `runner_id ${JSON.stringify(runnerId)} is not an enrolled runner` });
  const integration = attrs['integration'];
  let type: unknown;
  if (!isObject(integration) || Object.keys(integration).join(',') !== 'type,credentials') {
    errors.push({ pointer: '/data/attributes/integration', detail: 'integration must be exactly {"type":…,"credentials":…}' });
  } else {
    type = integration['type'];
    checkCredentialsShape(type, integration['credentials'], errors);
  }
  const name = attrs['name'];
  if (found && typeof type === 'string' && name !== `${type} (${found.runner.name})`) {
    errors.push({ pointer: '/data/attributes/name', detail: `name must be "${type} (${found.runner.name})", got ${JSON.stringify(name)}` });
  }
  const tags = attrs['tags'];
  if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string'))
    errors.push({ pointer: '/data/attributes/tags', detail: 'tags must be an array of strings' });
  else if (found && !tags.includes(`runner-id:${found.runner.runnerId}`))
    errors.push({ pointer: '/data/attributes/tags', detail: 'tags must include runner-id:<runner_id>' });
  if (errors.length > 0) return jsonApiErrors(400, errors);

  const connection: CreatedConnection = {
    connectionId: randomUUID(),
    runnerId: runnerId as string,
    name: name as string,
    integrationType: type as CreatedConnection['integrationType'],
    credentials: (integration as Record<string, unknown>)['credentials'] as Record<string, unknown>,
    tags: tags as string[],
    ...(headers['user-agent'] ? { userAgent: headers['user-agent'] } : {}),
  };
  created.push(connection);
  return {
    status: 201,
    body: {
      data: {
        id: connection.connectionId,
        type: 'action_connection',
        attributes: {
          name: connection.name,
          runner_id: connection.runnerId,
          tags: connection.tags,
          integration: { type: connection.integrationType },
        },
      },
    },
    detail: `created ${connection.integrationType} connection for ${connection.runnerId}`,
  };
}
