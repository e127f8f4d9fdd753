import { defineConfig } from 'tsup';

// Entry names map 1:1 to the exports map and bins in package.json.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'control-plane/index': 'src/control-plane/index.ts',
    'control-plane/cli': 'src/control-plane/cli.ts',
    'signer/index': 'src/signer/index.ts',
    'signer/cli': 'src/signer/cli.ts',
    'provision/index': 'src/provision/index.ts',
    'provision/cli': 'src/provision/cli.ts',
  },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  dts: { entry: { index: 'src/index.ts', 'control-plane/index': 'src/control-plane/index.ts', 'signer/index': 'src/signer/index.ts', 'provision/index': 'src/provision/index.ts' } },
  sourcemap: true,
  clean: true,
  splitting: true,
});
