import { defineConfig } from 'tsup';
import { packageBuildConfig } from '../../config/tsup.shared.mjs';

// The workspace's one build configuration (config/tsup.shared.mjs). Entry names map 1:1 to the
// `exports` map and `bin` in package.json.
export default defineConfig(packageBuildConfig({ index: 'src/index.ts', cli: 'src/cli.ts' }));
