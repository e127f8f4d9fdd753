import { defineConfig } from 'tsup';
import { packageBuildConfig } from '../../config/tsup.shared.mjs';

// The workspace's one build configuration (config/tsup.shared.mjs). Entry names map 1:1 to the
// `exports` map in package.json: "." -> dist/index.{js,d.ts}, "./testing" -> dist/testing/index.{js,d.ts}.
// `./testing` imports vitest; it is an optional peer and must never be bundled.
export default defineConfig(packageBuildConfig({ index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' }, { external: ['vitest'] }));
