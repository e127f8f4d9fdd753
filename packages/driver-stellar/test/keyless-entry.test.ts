/**
 * The package root is what the keyless control plane loads. Built, it must reach no signing code
 * (the ChainSigner) and no provisioner (which generates and signs with a set-up key) until
 * createSigner / createProvisioner import them. Reads dist/: build first (`npx tsup`).
 */
import { fileURLToPath } from 'node:url';
import { expectLoadedLazily } from '@vault/sdk/testing';
import { it } from 'vitest';

it('the built root entry reaches the ChainSigner and the provisioner only through a dynamic import', () => {
  expectLoadedLazily(fileURLToPath(new URL('../dist/index.js', import.meta.url)), {
    'the ChainSigner (signPayload)': /\bsignPayload\s*\(/,
    'the provisioner (provision)': /\basync provision\s*\(/,
  });
});
