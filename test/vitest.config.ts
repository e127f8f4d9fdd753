import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['*.test.ts'],
    // The tarball test installs from the npm registry (or its cache) and starts three devnets.
    testTimeout: 180_000,
    hookTimeout: 600_000,
  },
});
