import { defineConfig } from 'tsup';

// ESM only. Entry names map 1:1 to the `exports` map and `bin` in package.json.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    signer: 'src/signer.ts',
    'devnet/index': 'src/devnet/index.ts',
    'devnet/cli': 'src/devnet/cli.ts',
  },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  // Ledger libraries and @vault/sdk stay external (dependencies / peer). The CLI keeps the
  // `#!/usr/bin/env node` line of src/devnet/cli.ts (esbuild preserves an entry's hashbang).
});
