/**
 * The one build configuration every workspace package uses: ESM only, Node 20 target, types and
 * source maps. A package's tsup.config.ts states only its entries (which map 1:1 to the `exports`
 * map and `bin` of its package.json) and what else differs. Dependencies and peers stay external;
 * a CLI entry keeps its `#!/usr/bin/env node` line (esbuild preserves an entry's hashbang).
 */

/**
 * @param {Record<string, string>} entry
 * @param {import('./tsup.shared.d.mts').PackageBuildOptions} [options]
 */
export function packageBuildConfig(entry, options = {}) {
  return {
    entry,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    // Declarations for every entry unless the package names the ones it publishes types for.
    dts: options.dtsEntry ? { entry: options.dtsEntry } : true,
    sourcemap: true,
    clean: true,
    splitting: true,
    ...(options.external ? { external: options.external } : {}),
  };
}
