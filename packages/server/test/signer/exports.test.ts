import { describe, expect, it } from 'vitest';
import * as signer from '../../src/signer/index.js';

describe('@vault/server/signer exports', () => {
  it('exports exactly the public API (changes show up in review)', () => {
    expect(Object.keys(signer).sort()).toEqual([
      'DEFAULT_KDF',
      'DEFAULT_RECEIPTS_LIMIT',
      'DriverModuleSchema',
      'DriversConfigSchema',
      'KeyFileSchema',
      'KeyScopeSchema',
      'KeystoreError',
      'MAX_RECEIPTS_LIMIT',
      'MAX_RESTRICTIONS_IN_FORCE',
      'SIGN_BODY_LIMIT',
      'SignerState',
      'SoftwareKeystore',
      'StateEventSchema',
      'TrustFileSchema',
      'applyRestrictions',
      'createKey',
      'createSignerApp',
      'describeKeys',
      'describeRestrictions',
      'formatUnits',
      'generateSecret',
      'keyIdOf',
      'liftRestrictions',
      'loadDriverModules',
      'loadOrCreateReceiptKey',
      'loadTrust',
      'openKey',
      'parseTrust',
      'publicKeyOf',
      'resolveModule',
      'resolveToken',
      'restrictedTrust',
      'sameDescriptor',
      'scopeAllows',
      'sealKey',
      'softwareSigningKey',
      'startSigner',
      'summarize',
      'trustFileJsonSchema',
      'verifyAndSign',
    ]);
  });
});
