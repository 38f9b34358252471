// TLS certificate failures are not network hiccups: retrying cannot fix a certificate that is not
// trusted, and the operator needs a different hint (NODE_EXTRA_CA_CERTS for a corporate CA).

const CERTIFICATE_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The certificate error code when err is one, else undefined. */
export function tlsCertificateErrorCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && CERTIFICATE_CODES.has(e.code)) return e.code;
  }
  return undefined;
}

export const TLS_HINT =
  'Not retried: the certificate is not trusted. If a TLS-inspecting proxy or a private CA is in the path, ' +
  'give its CA with NODE_EXTRA_CA_CERTS=/path/ca.pem; check the system clock for expiry errors.';
