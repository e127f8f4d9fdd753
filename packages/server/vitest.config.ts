import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../config/vitest.shared.mjs';

// The workspace's one test configuration (config/vitest.shared.mjs); here only what differs.
export default defineConfig(packageTestConfig());
