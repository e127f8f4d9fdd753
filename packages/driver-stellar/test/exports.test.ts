import { describe, expect, it } from 'vitest';

describe('public exports (a change here is an API change)', () => {
  it('@vault/driver-stellar', async () => {
    expect(Object.keys(await import('../src/index.js')).sort()).toMatchSnapshot();
  });
  it('@vault/driver-stellar/signer', async () => {
    expect(Object.keys(await import('../src/signer.js')).sort()).toMatchSnapshot();
  });
  it('@vault/driver-stellar/devnet', async () => {
    expect(Object.keys(await import('../src/devnet/index.js')).sort()).toMatchSnapshot();
  });
});
