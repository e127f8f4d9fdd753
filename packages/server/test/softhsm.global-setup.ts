/**
 * Once per `vitest run` of this package, before any test file: SoftHSM2 for the PKCS#11 signer
 * tests, installed here when it is missing and this machine can (root + apt-get), so parallel test
 * files never race one apt-get. When it cannot be installed the set-up says what to run and the
 * PKCS#11 test files fail with the same message (they call ensureSoftHsm too): nothing is skipped.
 */
import { ensureSoftHsm } from '../../../scripts/softhsm.mjs';

export default function setup(): void {
  try {
    ensureSoftHsm({ log: (line) => console.log(line) });
  } catch (e) {
    console.error(`[softhsm] ${(e as Error).message}`);
  }
}
