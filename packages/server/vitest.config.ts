import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../config/vitest.shared.mjs';

// The workspace's one test configuration (config/vitest.shared.mjs); here only what differs:
// SoftHSM2 and Chromium are made present once, before the PKCS#11 signer tests and the browser tests run.
export default defineConfig(packageTestConfig({ globalSetup: ['test/softhsm.global-setup.ts', 'test/chromium.global-setup.ts'] }));
