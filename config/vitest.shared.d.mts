// Types of vitest.shared.mjs. Self-contained on purpose: this folder has no node_modules, and each
// package's `defineConfig(packageTestConfig(...))` checks this shape against vitest's own types.

export interface PackageTestOptions {
  /** Files run once before the package's tests (e.g. building a CLI they spawn). */
  globalSetup?: string[];
  /** Sources kept out of coverage beyond tests and benches (e.g. a CLI entry tested as a process). */
  coverageExclude?: string[];
  /** Line and statement coverage below which the run fails. Default 80. */
  coverageFloor?: number;
}

export interface PackageTestConfig {
  test: {
    include: string[];
    environment: 'node';
    testTimeout: number;
    hookTimeout: number;
    globalSetup?: string[];
    coverage: {
      provider: 'v8';
      include: string[];
      exclude: string[];
      reporter: ('text-summary' | 'json-summary' | 'html')[];
      reportsDirectory: string;
      thresholds: { lines: number; statements: number };
    };
    benchmark: { include: string[] };
  };
}

/** The shared test configuration, with a package's differences applied. */
export function packageTestConfig(options?: PackageTestOptions): PackageTestConfig;
