/** The public export list, snapshotted so an API change shows in review. */
import { expect, it } from 'vitest';
import * as api from './index.js';

it('public exports', () => {
  expect(Object.keys(api).sort()).toMatchSnapshot();
});
