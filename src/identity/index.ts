export { apiKeyHash } from './api-key-hash.js';
export {
  type DecodedIdentity,
  decodeIdentity,
  type IdentityRecord,
  serializeIdentityFile,
  unknownNames,
} from './identity-record.js';
export {
  decodePrivateJwk,
  encodePrivateJwk,
  generateIdentityKey,
  type PrivateIdentityKey,
} from './private-jwk.js';
export { publicKeyPem } from './public-pem.js';
export { buildUrn, parseUrn, regionFromSite } from './urn.js';
