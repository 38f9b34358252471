import { issueClientCert, type PemPair, selfSignedCert } from '../self-signed-cert.js';

interface ServingCert {
  /** PEM; also the CA, since the certificate is self-signed. */
  cert: string;
  key: string;
}

/**
 * A name the serving certificate is also valid for (besides 127.0.0.1, ::1 and localhost). Nothing
 * resolves it: clients reach it through tls-server-name, or through a proxy that maps it to loopback.
 */
export const KUBE_EMULATOR_DNS_NAME = 'kube-emulator.test';

let cached: Promise<ServingCert> | undefined;
let clientCa: Promise<PemPair> | undefined;

function once<T>(make: () => Promise<T>, get: () => Promise<T> | undefined, set: (p: Promise<T> | undefined) => void): Promise<T> {
  const existing = get();
  if (existing) return existing;
  const made = make().catch((e: unknown) => {
    set(undefined);
    throw e;
  });
  set(made);
  return made;
}

/** The serving certificate, one per process: it is only ever trusted through the kubeconfig we hand out. */
export function servingCert(): Promise<ServingCert> {
  return once(
    () => selfSignedCert({ subject: '/CN=kube-emulator', extendedKeyUsage: 'serverAuth', dnsNames: [KUBE_EMULATOR_DNS_NAME] }),
    () => cached,
    (p) => {
      cached = p;
    },
  );
}

/** The CA the emulator trusts for client certificates (the apiserver's --client-ca-file), one per process. */
export function clientCaCert(): Promise<PemPair> {
  return once(
    () => selfSignedCert({ subject: '/CN=kube-emulator-client-ca', extendedKeyUsage: 'clientAuth' }),
    () => clientCa,
    (p) => {
      clientCa = p;
    },
  );
}

/** A client certificate as the apiserver reads one: the common name is the user, each organisation a group. */
export async function clientCertFor(user: string, groups: string[]): Promise<PemPair> {
  const rdn = (v: string) => v.replace(/[/\\]/g, (c) => `\\${c}`);
  return issueClientCert(await clientCaCert(), `/CN=${rdn(user)}${groups.map((g) => `/O=${rdn(g)}`).join('')}`);
}
