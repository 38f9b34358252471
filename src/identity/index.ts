export { apiKeyHash } from './api-key-hash.js';
export {
  type DecodedIdentity,
  decodeIdentity,
  type IdentityRecord,
  parseIdentityFile,
  serializeIdentityFile,
} from './identity-record.js';
export {
  decodePrivateJwk,
  encodePrivateJwk,
  generateIdentityKey,
  type PrivateIdentityKey,
  thumbprintOf,
} from './private-jwk.js';
export { publicKeyPem } from './public-pem.js';
export { JWT_LIFETIME_SECONDS, signRunnerJwt } from './runner-jwt.js';
export { buildUrn, checkRunnerId, parseUrn, type RunnerUrn, regionFromSite } from './urn.js';
