/**
 * @module web/shared/node-crypto
 * What the browser bundles get for `node:crypto`. The apps use the SDK's pure functions (canonical
 * JSON, the approval and device-session messages, units); the SDK's Node paths that import
 * `node:crypto` (sha256Hex, its ed25519 and HMAC helpers) are never called in a page, and would
 * throw here rather than do anything else. The page's own crypto is WebCrypto.
 */
const unavailable = (name: string) => () => {
  throw new Error(`node:crypto ${name} is not available in the browser (use WebCrypto)`);
};
export const createHash = unavailable('createHash');
export const createHmac = unavailable('createHmac');
export const randomBytes = unavailable('randomBytes');
export const createPrivateKey = unavailable('createPrivateKey');
export const createPublicKey = unavailable('createPublicKey');
export const sign = unavailable('sign');
export const verify = unavailable('verify');
export const timingSafeEqual = unavailable('timingSafeEqual');
export default {};
