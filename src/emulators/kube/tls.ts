import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ServingCert {
  /** PEM; also the CA, since the certificate is self-signed. */
  cert: string;
  key: string;
}

let cached: Promise<ServingCert> | undefined;

/**
 * A self-signed P-256 serving certificate for 127.0.0.1, ::1 and localhost, made with the system
 * openssl (Node cannot issue X.509 certificates itself). One per process: it is only ever trusted
 * through the kubeconfig we hand out.
 */
export function servingCert(): Promise<ServingCert> {
  cached ??= generate().catch((e: unknown) => {
    cached = undefined;
    throw e;
  });
  return cached;
}

async function generate(): Promise<ServingCert> {
  const dir = await mkdtemp(join(tmpdir(), 'kube-emulator-tls-'));
  try {
    const keyPath = join(dir, 'tls.key');
    const certPath = join(dir, 'tls.crt');
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
      '/CN=kube-emulator',
      '-addext',
      'subjectAltName=IP:127.0.0.1,IP:0:0:0:0:0:0:0:1,DNS:localhost',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,digitalSignature,keyCertSign',
      '-addext',
      'extendedKeyUsage=serverAuth',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ]);
    return { cert: await readFile(certPath, 'utf8'), key: await readFile(keyPath, 'utf8') };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') throw new Error('kube emulator: the openssl binary is needed to serve HTTPS (or start with tls: false)');
    throw e;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
