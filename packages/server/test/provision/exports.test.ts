/** The public surface of `@vault/server/provision`: API changes show up in review. */
import { expect, it } from 'vitest';
import * as provision from '../../src/provision/index.js';

it('exports of @vault/server/provision', () => {
  expect(Object.keys(provision).sort()).toEqual(['ProvisionConfigSchema', 'ProvisionWalletSchema', 'provision', 'readProvisionConfig']);
});
