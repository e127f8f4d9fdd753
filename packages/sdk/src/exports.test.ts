import { describe, expect, it } from 'vitest';
import * as main from './index.js';
import * as testing from './testing/index.js';

// API changes show up in review: a new, renamed or removed export changes these snapshots.
describe('public exports', () => {
  it('@vault/sdk', () => {
    expect(Object.keys(main).sort()).toMatchSnapshot();
  });
  it('@vault/sdk/testing', () => {
    expect(Object.keys(testing).sort()).toMatchSnapshot();
  });
});
