import { describe, expect, it } from 'vitest';

// API changes show up in review: a new, renamed or removed export changes these snapshots.
describe('public exports', () => {
  it('@vault/driver-xrpl', async () => {
    expect(Object.keys(await import('./index.js')).sort()).toMatchSnapshot();
  });
  it('@vault/driver-xrpl/signer', async () => {
    expect(Object.keys(await import('./signer.js')).sort()).toMatchSnapshot();
  });
  it('@vault/driver-xrpl/provision', async () => {
    expect(Object.keys(await import('./provision.js')).sort()).toMatchSnapshot();
  });
  it('@vault/driver-xrpl/devnet', async () => {
    expect(Object.keys(await import('./devnet/index.js')).sort()).toMatchSnapshot();
  });
});
