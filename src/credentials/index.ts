export { deleteProfile, KEYCHAIN_SERVICE, KeychainUnavailableError, maskSecret, type Profile, PROFILE_FIELDS, type ProfileField, readProfile, writeProfile } from './keychain.js';
