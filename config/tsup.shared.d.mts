// Types of tsup.shared.mjs. Self-contained on purpose (this folder has no node_modules); each
// package's `defineConfig(packageBuildConfig(...))` checks this shape against tsup's own types.

export interface PackageBuildOptions {
  /** Entries that get declaration files (default: all); CLI entries need none. */
  dtsEntry?: Record<string, string>;
  /** Imports never bundled beyond dependencies and peers (e.g. an optional test runner). */
  external?: string[];
}

export interface PackageBuildConfig {
  entry: Record<string, string>;
  format: 'esm'[];
  platform: 'node';
  target: 'node20';
  dts: true | { entry: Record<string, string> };
  sourcemap: true;
  clean: true;
  splitting: true;
  external?: string[];
}

/** The shared build configuration for `entry`. */
export function packageBuildConfig(entry: Record<string, string>, options?: PackageBuildOptions): PackageBuildConfig;
