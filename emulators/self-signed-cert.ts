import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PemPair {
  cert: string;
  key: string;
}

async function withOpenssl<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'emulator-cert-'));
  try {
    return await work(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('emulator: the openssl binary is needed to serve HTTPS');
    throw e;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A self-signed P-256 certificate (its own CA) for 127.0.0.1, ::1, localhost and `dnsNames`, made with
 * the system openssl: Node cannot issue X.509 certificates. Shared by the emulators that serve HTTPS.
 */
export function selfSignedCert(options: { subject: string; extendedKeyUsage: string; dnsNames?: string[] }): Promise<PemPair> {
  return withOpenssl(async (dir) => {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    const sans = ['IP:127.0.0.1', 'IP:0:0:0:0:0:0:0:1', 'DNS:localhost', ...(options.dnsNames ?? []).map((n) => `DNS:${n}`)];
    // biome-ignore format: one openssl option per line pair reads best
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '3650',
      '-subj', options.subject,
      '-addext', `subjectAltName=${sans.join(',')}`,
      '-addext', 'basicConstraints=critical,CA:TRUE',
      '-addext', 'keyUsage=critical,digitalSignature,keyCertSign',
      '-addext', `extendedKeyUsage=${options.extendedKeyUsage}`,
      '-keyout', keyPath,
      '-out', certPath,
    ]);
    return { cert: await readFile(certPath, 'utf8'), key: await readFile(keyPath, 'utf8') };
  });
}

/** A P-256 client certificate for `subject` (e.g. /CN=alice/O=devs), signed by `ca`. */
export function issueClientCert(ca: PemPair, subject: string): Promise<PemPair> {
  return withOpenssl(async (dir) => {
    const [caCert, caKey, key, csr, cert, ext] = ['ca.pem', 'ca.key', 'key.pem', 'req.csr', 'cert.pem', 'ext.cnf'].map((f) =>
      join(dir, f),
    ) as [string, string, string, string, string, string];
    await writeFile(caCert, ca.cert);
    await writeFile(caKey, ca.key, { mode: 0o600 });
    await writeFile(ext, 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
    await run('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      subject,
      '-keyout',
      key,
      '-out',
      csr,
    ]);
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      caCert,
      '-CAkey',
      caKey,
      '-set_serial',
      `0x${Date.now().toString(16)}`,
      '-days',
      '3650',
      '-extfile',
      ext,
      '-out',
      cert,
    ]);
    return { cert: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') };
  });
}
