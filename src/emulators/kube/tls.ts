import { selfSignedCert } from '../self-signed-cert.js';

interface ServingCert {
  /** PEM; also the CA, since the certificate is self-signed. */
  cert: string;
  key: string;
}

let cached: Promise<ServingCert> | undefined;

/** The serving certificate, one per process: it is only ever trusted through the kubeconfig we hand out. */
export function servingCert(): Promise<ServingCert> {
  cached ??= generate().catch((e: unknown) => {
    cached = undefined;
    throw e;
  });
  return cached;
}

function generate(): Promise<ServingCert> {
  return selfSignedCert({ subject: '/CN=kube-emulator', extendedKeyUsage: 'serverAuth' });
}
