import { stringify } from 'yaml';

export interface KubeconfigOptions {
  token?: string;
  namespace?: string;
  contextName?: string;
}

/**
 * A kubeconfig that kubectl and client-node both accept: https with the emulator's own CA, or for
 * plain http the insecure-skip-tls-verify flag that client-node insists on before it will talk http.
 */
export function renderKubeconfig(server: string, token: string, caPem: string | undefined, opts: KubeconfigOptions): string {
  const context = opts.contextName ?? 'kube-emulator';
  const contextBody: Record<string, string> = { cluster: context, user: context };
  if (opts.namespace) contextBody['namespace'] = opts.namespace;
  const cluster: Record<string, unknown> = { server };
  if (server.startsWith('http:')) cluster['insecure-skip-tls-verify'] = true;
  else if (caPem) cluster['certificate-authority-data'] = Buffer.from(caPem).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name: context, cluster }],
    users: [{ name: context, user: { token } }],
    contexts: [{ name: context, context: contextBody }],
    'current-context': context,
  });
}
