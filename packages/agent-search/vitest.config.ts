import { defineConfig } from 'vitest/config';

// Reporters are set on the command line by the `test` script in package.json
// (default + json to test-results/vitest.json, which scripts/run.mjs sums up).
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    // Tests spawn real processes and ledgers; a loaded 2-core CI machine needs headroom.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.test.ts', 'src/**/*.bench.ts', 'src/cli.ts'],
      reporter: ['text-summary', 'json-summary', 'html'],
      reportsDirectory: 'coverage',
      thresholds: {
        lines: 80,
        statements: 80,
      },
    },
    benchmark: {
      include: ['src/**/*.bench.ts', 'test/**/*.bench.ts'],
    },
  },
});
