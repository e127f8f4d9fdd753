/**
 * Builds the devnet CLI once for the child-process test, into a cache folder inside the package
 * (so it resolves the same node_modules) and never into dist/, which `npx tsup` owns.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';

export const CLI_OUT = fileURLToPath(new URL('../node_modules/.cache/vault-xrpl-cli-test/', import.meta.url));

export default async function setup(): Promise<void> {
  await build({
    config: false,
    entry: { 'devnet/cli': fileURLToPath(new URL('../src/devnet/cli.ts', import.meta.url)) },
    outDir: CLI_OUT,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    dts: false,
    clean: true,
    silent: true,
    external: ['xrpl', 'ripple-binary-codec', 'ripple-keypairs', 'ripple-address-codec', '@vault/sdk'],
  });
}
