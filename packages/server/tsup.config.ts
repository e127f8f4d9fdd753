import { defineConfig } from 'tsup';
import { packageBuildConfig } from '../../config/tsup.shared.mjs';

// The workspace's one build configuration (config/tsup.shared.mjs). Entry names map 1:1 to the
// `exports` map and `bin` in package.json; the CLIs publish no types.
const libraries = {
  index: 'src/index.ts',
  'control-plane/index': 'src/control-plane/index.ts',
  'signer/index': 'src/signer/index.ts',
  'provision/index': 'src/provision/index.ts',
};
const config = packageBuildConfig(
  {
    ...libraries,
    'control-plane/cli': 'src/control-plane/cli.ts',
    'signer/cli': 'src/signer/cli.ts',
    'provision/cli': 'src/provision/cli.ts',
  },
  { dtsEntry: libraries },
);
// `@internal` members (IntentStore's LMDB handles) stay out of the published declarations: a
// consumer type-checking with skipLibCheck false would otherwise compile lmdb's own types, which
// do not compile under ESM module settings (test/dts-consumer.test.ts).
export default defineConfig({ ...config, dts: { entry: libraries, compilerOptions: { stripInternal: true } } });
