export {
  deleteProfile,
  KeychainUnavailableError,
  maskSecret,
  type Profile,
  PROFILE_FIELDS,
  readProfile,
  writeProfile,
} from './keychain.js';
