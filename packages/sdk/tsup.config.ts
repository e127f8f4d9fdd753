import { defineConfig } from 'tsup';

// ESM only. Entry names map 1:1 to the `exports` map in package.json:
// "." -> dist/index.{js,d.ts}, "./testing" -> dist/testing/index.{js,d.ts}.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
  },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  // `./testing` imports vitest; it is an optional peer and must never be bundled.
  external: ['vitest'],
});
