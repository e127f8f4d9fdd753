import { defineConfig } from 'tsup';

// ESM only. Entry names map 1:1 to the `exports` map and `bin` in package.json.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    cli: 'src/cli.ts',
  },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
});
