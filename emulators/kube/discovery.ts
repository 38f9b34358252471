import type { KindInfo, KindRegistry } from './kinds.js';

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T00:00:00Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const AGGREGATED_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

const STATUS_VERBS = ['get', 'patch', 'update'];

function storageVersionHash(info: KindInfo): string {
  return Buffer.from(`${info.group}/${info.version}/${info.kind}`).toString('base64').slice(0, 11);
}

export function apiVersions(hostPort: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: hostPort }],
  };
}

function groupEntry(group: string, versions: string[]) {
  const gv = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: gv, preferredVersion: gv[0] };
}

export function apiGroupList(kinds: KindRegistry) {
  const groups = new Map<string, string[]>();
  for (const { group, version } of kinds.groupVersions()) {
    if (!group) continue;
    groups.set(group, [...(groups.get(group) ?? []), version]);
  }
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups].map(([g, v]) => groupEntry(g, v)),
  };
}

export function apiGroup(kinds: KindRegistry, group: string) {
  const versions = kinds
    .groupVersions()
    .filter((gv) => gv.group === group)
    .map((gv) => gv.version);
  if (versions.length === 0) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions) };
}

export function apiResourceList(kinds: KindRegistry, group: string, version: string) {
  const infos = kinds.all().filter((k) => k.group === group && k.version === version);
  if (infos.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const info of infos.sort((a, b) => a.plural.localeCompare(b.plural))) {
    const entry: Record<string, unknown> = {
      name: info.plural,
      singularName: info.singular,
      namespaced: info.namespaced,
      kind: info.kind,
      verbs: info.verbs,
    };
    if (info.shortNames.length) entry['shortNames'] = info.shortNames;
    if (info.categories.length) entry['categories'] = info.categories;
    if (info.stored) entry['storageVersionHash'] = storageVersionHash(info);
    resources.push(entry);
    if (info.hasStatus) {
      resources.push({
        name: `${info.plural}/status`,
        singularName: '',
        namespaced: info.namespaced,
        kind: info.kind,
        verbs: STATUS_VERBS,
      });
    }
    if (info.hasScale) {
      resources.push({
        name: `${info.plural}/scale`,
        singularName: '',
        namespaced: info.namespaced,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: STATUS_VERBS,
      });
    }
    for (const sub of info.extraSubresources) {
      resources.push({
        name: `${info.plural}/${sub.name}`,
        singularName: '',
        namespaced: info.namespaced,
        group: sub.group,
        version: sub.version,
        kind: sub.kind,
        verbs: sub.verbs,
      });
    }
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

/** apidiscovery.k8s.io/v2 APIGroupDiscoveryList, for /api (core only) or /apis (named groups). */
export function aggregatedDiscovery(kinds: KindRegistry, core: boolean, apiVersion: string) {
  const groups = new Map<string, Map<string, KindInfo[]>>();
  for (const info of kinds.all()) {
    if ((info.group === '') !== core) continue;
    const versions = groups.get(info.group) ?? new Map<string, KindInfo[]>();
    versions.set(info.version, [...(versions.get(info.version) ?? []), info]);
    groups.set(info.group, versions);
  }
  const items = [...groups].map(([group, versions]) => ({
    metadata: { name: group, creationTimestamp: null },
    versions: [...versions].map(([version, infos]) => ({
      version,
      resources: infos
        .sort((a, b) => a.plural.localeCompare(b.plural))
        .map((info) => {
          const r: Record<string, unknown> = {
            resource: info.plural,
            responseKind: { group: info.group, version: info.version, kind: info.kind },
            scope: info.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: info.singular,
            verbs: info.verbs,
          };
          if (info.shortNames.length) r['shortNames'] = info.shortNames;
          if (info.categories.length) r['categories'] = info.categories;
          const subresources: Record<string, unknown>[] = [];
          if (info.hasStatus) {
            subresources.push({
              subresource: 'status',
              responseKind: { group: info.group, version: info.version, kind: info.kind },
              verbs: STATUS_VERBS,
            });
          }
          if (info.hasScale) {
            subresources.push({
              subresource: 'scale',
              responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
              verbs: STATUS_VERBS,
            });
          }
          for (const sub of info.extraSubresources) {
            subresources.push({
              subresource: sub.name,
              responseKind: { group: sub.group, version: sub.version, kind: sub.kind },
              verbs: sub.verbs,
            });
          }
          if (subresources.length) r['subresources'] = subresources;
          return r;
        }),
      freshness: 'Current',
    })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion, metadata: {}, items };
}

/** Which aggregated-discovery media type the Accept header asks for first, if any. */
export function wantsAggregated(accept: string | undefined): string | undefined {
  if (!accept) return undefined;
  for (const part of accept.split(',')) {
    const p = part.replace(/\s+/g, '');
    if (!p.includes('as=APIGroupDiscoveryList') || !p.includes('g=apidiscovery.k8s.io')) continue;
    if (p.includes('v=v2beta1')) return AGGREGATED_V2BETA1;
    if (p.includes('v=v2')) return AGGREGATED_V2;
  }
  return undefined;
}
