import { defineConfig } from 'tsup';
import { packageBuildConfig } from '../../config/tsup.shared.mjs';

// The workspace's one build configuration (config/tsup.shared.mjs). Entry names map 1:1 to the
// `exports` map and `bin` in package.json.
export default defineConfig(
  packageBuildConfig({
    index: 'src/index.ts',
    signer: 'src/signer.ts',
    provision: 'src/provision.ts',
    'devnet/index': 'src/devnet/index.ts',
    'devnet/cli': 'src/devnet/cli.ts',
  }),
);
