/**
 * The one vitest configuration every workspace package uses; a package's vitest.config.ts states
 * only what differs (a global setup, files kept out of coverage, a stricter coverage floor).
 * Reporters are set on the command line by each package's `test` script (default + json to
 * test-results/vitest.json, which scripts/run.mjs sums up).
 *
 * Plain .mjs with a .d.mts beside it, so each package's tsconfig (rootDir ".") can type-check its
 * config without compiling a file outside the package.
 */

/** @param {import('./vitest.shared.d.mts').PackageTestOptions} [options] */
export function packageTestConfig(options = {}) {
  const floor = options.coverageFloor ?? 80;
  return {
    test: {
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      environment: 'node',
      // Tests spawn real processes and ledgers; a loaded 2-core CI machine needs headroom.
      testTimeout: 30_000,
      hookTimeout: 60_000,
      ...(options.globalSetup ? { globalSetup: options.globalSetup } : {}),
      coverage: {
        provider: 'v8',
        include: ['src/**/*.ts'],
        exclude: ['src/**/*.test.ts', 'src/**/*.bench.ts', ...(options.coverageExclude ?? [])],
        reporter: ['text-summary', 'json-summary', 'html'],
        reportsDirectory: 'coverage',
        thresholds: { lines: floor, statements: floor },
      },
      benchmark: {
        include: ['src/**/*.bench.ts', 'test/**/*.bench.ts'],
      },
    },
  };
}
