/** The public surface of `@vault/server/control-plane`: API changes show up in review. */
import { expect, it } from 'vitest';
import * as cp from '../../src/control-plane/index.js';
import * as http from '../../src/http/index.js';

it('exports of @vault/server/control-plane and the shared HTTP edge', () => {
  expect(Object.keys(cp).sort()).toMatchSnapshot();
  expect(Object.keys(http).sort()).toMatchSnapshot();
});
