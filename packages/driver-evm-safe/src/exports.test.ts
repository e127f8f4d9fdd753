import { describe, expect, it } from 'vitest';
import * as main from './index.js';
import * as signer from './signer.js';
import * as provision from './provision.js';
import * as devnet from './devnet/index.js';

// API changes show up in review: a new, renamed or removed export changes these snapshots.
describe('public exports', () => {
  it('@vault/driver-evm-safe', () => {
    expect(Object.keys(main).sort()).toMatchSnapshot();
  });
  it('@vault/driver-evm-safe/signer', () => {
    expect(Object.keys(signer).sort()).toMatchSnapshot();
  });
  it('@vault/driver-evm-safe/provision', () => {
    expect(Object.keys(provision).sort()).toMatchSnapshot();
  });
  it('@vault/driver-evm-safe/devnet', () => {
    expect(Object.keys(devnet).sort()).toMatchSnapshot();
  });
});
