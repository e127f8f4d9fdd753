import { describe, expect, it } from 'vitest';
import { DriverRegistryError } from '../errors.js';
import { assertChainDriver, assertChainSigner, defineChainDriver, defineChainSigner } from './define.js';
import { DriverRegistry } from './registry.js';
import type { ChainDriver, ChainSigner } from './types.js';

const notUsed = () => {
  throw new Error('not used');
};

function driver(name: string, chains: string[], overrides: Partial<ChainDriver> = {}): ChainDriver {
  return {
    name,
    family: 'toy',
    chains,
    paramsKind: 'xrpl',
    operations: ['transfer'],
    validateAddress: () => ({ valid: true, normalized: 'x', network: null }),
    fetchParams: notUsed,
    fetchProtectInputs: notUsed,
    buildPayload: notUsed,
    assemble: notUsed,
    submit: notUsed,
    confirm: notUsed,
    balances: notUsed,
    controlState: notUsed,
    payloadFate: notUsed,
    ...overrides,
  };
}

describe('defineChainDriver', () => {
  it('returns the same driver, frozen with its chain and operation lists', () => {
    const d = driver('a', ['toy:devnet']);
    const defined = defineChainDriver(d);
    expect(defined).toBe(d);
    expect(Object.isFrozen(defined)).toBe(true);
    expect(Object.isFrozen(defined.chains)).toBe(true);
    expect(Object.isFrozen(defined.operations)).toBe(true);
  });

  it.each([
    ['no name', { name: '' }],
    ['no family', { family: '' }],
    ['no chains', { chains: [] }],
    ['a chain without a namespace', { chains: ['testnet'] }],
    ['a chain listed twice', { chains: ['toy:a', 'toy:a'] }],
    ['a missing method', { submit: undefined as unknown as ChainDriver['submit'] }],
    ['no payloadFate (the double-spend rule is required)', { payloadFate: undefined as unknown as ChainDriver['payloadFate'] }],
    ['a networkOf but no payloadFate (a driver written for the old contract)', { payloadFate: undefined as unknown as ChainDriver['payloadFate'], networkOf: () => null } as Partial<ChainDriver>],
    ['an unknown operation', { operations: ['teleport'] as unknown as ChainDriver['operations'] }],
    ['no operations', { operations: [] }],
    ['no paramsKind', { paramsKind: '' }],
    ['an unknown paramsKind', { paramsKind: 'solana' }],
  ])('refuses a driver with %s', (_what, overrides) => {
    expect(() => defineChainDriver(driver('bad', ['toy:devnet'], overrides as Partial<ChainDriver>))).toThrow(DriverRegistryError);
    // The servers check every loaded driver the same way, without freezing it.
    expect(() => assertChainDriver(driver('bad', ['toy:devnet'], overrides as Partial<ChainDriver>))).toThrow(DriverRegistryError);
  });

  it('assertChainDriver names the missing payloadFate and leaves a good driver unfrozen', () => {
    expect(() => assertChainDriver(driver('old', ['toy:devnet'], { payloadFate: undefined as unknown as ChainDriver['payloadFate'] }))).toThrow(/invalid driver old: payloadFate must be a function/);
    const d = driver('a', ['toy:devnet']);
    assertChainDriver(d);
    expect(Object.isFrozen(d)).toBe(false);
  });

  it('assertChainSigner refuses a signer without signPayload', () => {
    const base = { name: 's', family: 'toy', chains: ['toy:devnet'], deriveAddress: () => 'x', signPayload: async () => { throw new Error('unused'); } } as ChainSigner;
    expect(() => assertChainSigner(base)).not.toThrow();
    expect(() => assertChainSigner({ ...base, signPayload: undefined } as unknown as ChainSigner)).toThrow(/signPayload must be a function/);
  });
});

it('accepts a third-party driver with custom params', () => {
  expect(defineChainDriver(driver('toy', ['toy:devnet'], { paramsKind: 'custom' })).paramsKind).toBe('custom');
});

describe('defineChainSigner', () => {
  const signer: ChainSigner = { name: 's', family: 'toy', chains: ['toy:devnet'], deriveAddress: () => 'x', signPayload: notUsed };
  it('accepts a complete signer and refuses an incomplete one', () => {
    expect(defineChainSigner({ ...signer })).toMatchObject({ name: 's' });
    expect(() => defineChainSigner({ ...signer, signPayload: undefined as unknown as ChainSigner['signPayload'] })).toThrow(/signPayload/);
    expect(() => defineChainSigner({ ...signer, chains: [] })).toThrow(/chains/);
  });
});

describe('DriverRegistry', () => {
  it('matches chains exactly and never widens', () => {
    const reg = new DriverRegistry<ChainDriver>([driver('xrpl', ['xrpl:testnet'])]);
    expect(reg.get('xrpl:testnet').name).toBe('xrpl');
    for (const chain of ['xrpl:mainnet', 'xrpl', 'XRPL:testnet', 'xrpl:testnet ', 'xrpl:*']) {
      expect(() => reg.get(chain)).toThrow(DriverRegistryError);
    }
    try {
      reg.get('xrpl:mainnet');
    } catch (e) {
      expect((e as DriverRegistryError).reason).toBe('unknown_chain');
      expect((e as Error).message).toContain('registered: xrpl:testnet');
    }
  });

  it('rejects a duplicate registration as a whole', () => {
    const reg = new DriverRegistry<ChainDriver>([driver('first', ['toy:a'])]);
    expect(() => reg.register(driver('second', ['toy:b', 'toy:a']))).toThrow(/already served by first/);
    expect(reg.has('toy:b')).toBe(false);
  });

  it('lists chains and plugins', () => {
    const multi = driver('multi', ['toy:b', 'toy:a']);
    const reg = new DriverRegistry<ChainDriver>().register(multi).register(driver('other', ['eip155:1']));
    expect(reg.chains()).toEqual(['eip155:1', 'toy:a', 'toy:b']);
    expect(reg.plugins().map((p) => p.name)).toEqual(['multi', 'other']);
  });
});
