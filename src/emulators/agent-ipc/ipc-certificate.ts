import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The agent's IPC certificate: one self-signed P-256 certificate for localhost/127.0.0.1/::1 that
 * the agent serves with and that clients present back, stored as ONE PEM holding certificate and
 * key (what `ipc_cert.pem` holds). Made with the system openssl: Node cannot issue X.509.
 */
export async function generateIpcCertificate(): Promise<{ cert: string; key: string; pem: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-ipc-cert-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '3650',
      '-subj',
      '/O=Datadog, Inc./CN=agent-ipc-emulator',
      '-addext',
      'subjectAltName=IP:127.0.0.1,IP:0:0:0:0:0:0:0:1,DNS:localhost',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,digitalSignature,keyCertSign',
      '-addext',
      'extendedKeyUsage=serverAuth,clientAuth',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ]);
    const cert = await readFile(certPath, 'utf8');
    const key = await readFile(keyPath, 'utf8');
    return { cert, key, pem: `${cert}${key}` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
