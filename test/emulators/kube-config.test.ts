import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { seedNamespaces, startKubeEmulator } from '../../emulators/kube/index.js';

describe('kubeconfig', () => {
  it('writes a 0600 file that client-node loads, pinned to the emulator CA', async () => {
    const emu = await startKubeEmulator();
    const dir = await mkdtemp(join(tmpdir(), 'kube-config-'));
    try {
      seedNamespaces(emu, ['team']);
      emu.addToken('team-token', {
        user: 'team-user',
        namespace: 'team',
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
      });
      const file = join(dir, 'config');
      await emu.writeKubeconfig(file, { token: 'team-token', namespace: 'team', contextName: 'emu-team' });
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const doc = parse(emu.kubeconfig({ token: 'team-token', namespace: 'team', contextName: 'emu-team' }));
      expect(doc['current-context']).toBe('emu-team');
      expect(doc.contexts[0].context.namespace).toBe('team');
      expect(doc.users[0].user.token).toBe('team-token');
      expect(Buffer.from(doc.clusters[0].cluster['certificate-authority-data'], 'base64').toString()).toBe(emu.caCert);
      expect(emu.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);

      const kc = new KubeConfig();
      kc.loadFromFile(file);
      expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('team');
      const list = await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: 'team' });
      expect(list.items).toEqual([]);
      expect(emu.requests.at(-1)).toMatchObject({ user: 'team-user', verb: 'list', status: 200 });
    } finally {
      await emu.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('also serves plain http (client-node needs insecure-skip-tls-verify for that)', async () => {
    const emu = await startKubeEmulator({ tls: false, adminToken: 'fixed-admin' });
    try {
      expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(emu.caCert).toBeUndefined();
      expect(emu.adminToken).toBe('fixed-admin');
      seedNamespaces(emu);
      const doc = parse(emu.kubeconfig());
      expect(doc.clusters[0].cluster['insecure-skip-tls-verify']).toBe(true);
      const kc = new KubeConfig();
      kc.loadFromString(emu.kubeconfig());
      const ns = await kc.makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' });
      expect(ns.metadata?.uid).toBe(emu.getObject('v1', 'Namespace', undefined, 'kube-system')?.metadata.uid);
    } finally {
      await emu.close();
    }
  });

  it('can run several emulators side by side, each with its own port and state', async () => {
    const [a, b] = await Promise.all([startKubeEmulator(), startKubeEmulator()]);
    try {
      expect(a.url).not.toBe(b.url);
      seedNamespaces(a);
      expect(a.getObject('v1', 'Namespace', undefined, 'kube-system')).toBeDefined();
      expect(b.getObject('v1', 'Namespace', undefined, 'kube-system')).toBeUndefined();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
