/**
 * Once per `vitest run` of this package, before any test file: Debian's chromium for the browser
 * tests (test/browser/), installed here when it is missing and this machine can (root + apt-get),
 * so a test file never waits on apt-get inside its own hook. When it cannot be installed the set-up
 * says what to run and the browser tests fail with the same message (they call ensureChromium too):
 * nothing is skipped.
 */
import { ensureChromium } from '../../../scripts/chromium.mjs';

export default function setup(): void {
  try {
    console.log(`[chromium] ${ensureChromium()}`);
  } catch (e) {
    console.error(`[chromium] ${(e as Error).message}`);
  }
}
