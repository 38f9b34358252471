import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A self-signed P-256 certificate (its own CA) for 127.0.0.1, ::1 and localhost, made with the system
 * openssl: Node cannot issue X.509 certificates. Shared by the emulators that serve HTTPS.
 */
export async function selfSignedCert(options: { subject: string; extendedKeyUsage: string }): Promise<{ cert: string; key: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'emulator-cert-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    // biome-ignore format: one openssl option per line pair reads best
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '3650',
      '-subj', options.subject,
      '-addext', 'subjectAltName=IP:127.0.0.1,IP:0:0:0:0:0:0:0:1,DNS:localhost',
      '-addext', 'basicConstraints=critical,CA:TRUE',
      '-addext', 'keyUsage=critical,digitalSignature,keyCertSign',
      '-addext', `extendedKeyUsage=${options.extendedKeyUsage}`,
      '-keyout', keyPath,
      '-out', certPath,
    ]);
    return { cert: await readFile(certPath, 'utf8'), key: await readFile(keyPath, 'utf8') };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('emulator: the openssl binary is needed to serve HTTPS');
    throw e;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
