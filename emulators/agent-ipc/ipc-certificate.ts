import { selfSignedCert } from '../self-signed-cert.js';

/**
 * The agent's IPC certificate: one self-signed P-256 certificate for localhost/127.0.0.1/::1 that
 * the agent serves with and that clients present back, stored as ONE PEM holding certificate and
 * key (what `ipc_cert.pem` holds).
 */
export async function generateIpcCertificate(): Promise<{ cert: string; key: string; pem: string }> {
  const { cert, key } = await selfSignedCert({
    subject: '/O=Datadog, Inc./CN=agent-ipc-emulator',
    extendedKeyUsage: 'serverAuth,clientAuth',
  });
  return { cert, key, pem: `${cert}${key}` };
}
