import { describe, expect, it } from 'vitest';
import { normalizeIntent } from '../digest.js';
import { DriverRegistryError, ValidationError } from '../errors.js';
import { MEMORY_DEFAULT_MAX_FEE, MemoryLedger, createMemoryDriver, createSoftwareKey, memoryAddress, memoryWallet } from '../testing/index.js';
import { defineChainDriver } from './define.js';
import { checkFee } from './fee.js';
import type { ChainDriver } from './types.js';

const ledger = new MemoryLedger();
const driver = createMemoryDriver({ ledger });
const { wallet } = memoryWallet({ ledger, members: 3, quorum: 2 });
const destination = memoryAddress(createSoftwareKey().publicKey);

/** A payload paying `fee` (the memory ledger takes exactly the payload's fee). */
async function builtWithFee(fee: number) {
  const params = await driver.fetchParams({ wallet });
  if (params.kind !== 'xrpl') throw new Error('memory params are xrpl-shaped');
  return driver.buildPayload({ intent: normalizeIntent({ wallet: wallet.wallet, destination, amount: '5' }), wallet, params: { ...params, base_fee_drops: fee } });
}

describe('checkFee', () => {
  it("passes a payload within the driver's default cap when the trust file sets none", async () => {
    expect(checkFee(driver, await builtWithFee(10), undefined)).toMatchObject({ ok: true, fee: { amount: 10n }, cap: MEMORY_DEFAULT_MAX_FEE, capSource: 'driver_default' });
    expect(checkFee(driver, await builtWithFee(Number(MEMORY_DEFAULT_MAX_FEE)), undefined)).toMatchObject({ ok: true });
  });

  it("attack: a fee one unit above the driver's default cap is refused when the trust file is silent", async () => {
    const check = checkFee(driver, await builtWithFee(Number(MEMORY_DEFAULT_MAX_FEE) + 1), undefined);
    expect(check).toMatchObject({ ok: false });
    if (!check.ok) expect(check.message).toMatch(/above .*default cap 1000 \(the trust file sets no max_fee\)/);
  });

  it("an explicit max_fee wins over the driver's default, higher or lower", async () => {
    const high = await builtWithFee(5_000);
    expect(checkFee(driver, high, undefined).ok).toBe(false);
    expect(checkFee(driver, high, 5_000n)).toMatchObject({ ok: true, cap: 5_000n, capSource: 'max_fee' });
    const low = await builtWithFee(10);
    const refused = checkFee(driver, low, 9n);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.message).toMatch(/above the trust file's max_fee 9/);
    expect(checkFee(driver, low, 0n).ok).toBe(false);
  });

  it('attack: a driver that cannot state its fee gets no signature under any cap (fail closed)', async () => {
    const { fee: _fee, defaultMaxFee: _cap, ...rest } = driver;
    const mute = rest as ChainDriver;
    const built = await builtWithFee(10);
    for (const cap of [undefined, 10n ** 30n]) {
      const check = checkFee(mute, built, cap);
      expect(check.ok).toBe(false);
      if (!check.ok) expect(check.message).toMatch(/cannot state the fee/);
    }
  });

  it('attack: a payload whose fee the driver cannot bound is refused, however high the cap', async () => {
    const unbounded = defineChainDriver({
      ...driver,
      fee: () => {
        throw new ValidationError('built', [{ path: 'payload.tx.gasPrice', message: 'a gas refund is not bounded by the payload' }]);
      },
    });
    const check = checkFee(unbounded, await builtWithFee(10), 10n ** 30n);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message).toMatch(/cannot bound the fee of this payload/);
  });

  it('defineChainDriver takes fee and defaultMaxFee together, with a bigint cap', () => {
    const { fee: _fee, defaultMaxFee: _cap, ...rest } = driver;
    expect(() => defineChainDriver({ ...rest, fee: driver.fee })).toThrow(DriverRegistryError);
    expect(() => defineChainDriver({ ...rest, defaultMaxFee: 10n })).toThrow(/come together/);
    expect(() => defineChainDriver({ ...rest, fee: driver.fee, defaultMaxFee: 10 as unknown as bigint })).toThrow(/bigint/);
    expect(() => defineChainDriver({ ...rest, fee: driver.fee, defaultMaxFee: -1n })).toThrow(/>= 0/);
    expect((defineChainDriver({ ...rest }) as ChainDriver).fee).toBeUndefined();
  });
});
