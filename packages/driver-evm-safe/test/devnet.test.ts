import { afterAll, describe, expect, it } from 'vitest';
import { decodeFunctionResult, encodeFunctionData, getAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SAFE_V141_ADDRESSES, TEST_TOKEN_ABI, resolveAnvilPath, safeArtifactBytecode, startEvmDevnet } from '../src/devnet/index.js';
import { SAFE_ABI } from '../src/safe-tx.js';
import { rawRpc } from './helpers.js';

const devnet = await startEvmDevnet();
afterAll(() => devnet.stop());

const call = async (to: Address, data: Hex, from?: Address) => rawRpc<Hex>(devnet.rpcUrl, 'eth_call', [{ to, data, ...(from ? { from } : {}) }, 'latest']);
const read = async (token: Address, functionName: 'name' | 'symbol' | 'decimals' | 'totalSupply' | 'owner'): Promise<unknown> =>
  decodeFunctionResult({ abi: TEST_TOKEN_ABI, functionName, data: await call(token, encodeFunctionData({ abi: TEST_TOKEN_ABI, functionName } as never)) } as never);
const balanceOf = async (token: Address, holder: Address) =>
  BigInt(await call(token, encodeFunctionData({ abi: TEST_TOKEN_ABI, functionName: 'balanceOf', args: [holder] })));

describe('startEvmDevnet', () => {
  it('runs anvil on 127.0.0.1 with chain id 31337', async () => {
    expect(devnet.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(BigInt(await rawRpc<string>(devnet.rpcUrl, 'eth_chainId'))).toBe(31337n);
    expect(devnet.chain).toBe('eip155:31337');
    expect(() => process.kill(devnet.pid, 0)).not.toThrow();
  });

  it('deploys Safe v1.4.1 at the official addresses (the artifacts hash to them through the factory)', async () => {
    for (const [name, address] of Object.entries(SAFE_V141_ADDRESSES)) {
      const code = await rawRpc<string>(devnet.rpcUrl, 'eth_getCode', [address, 'latest']);
      expect(code.length, `${name} has code at ${address}`).toBeGreaterThan(2);
    }
    const version = decodeFunctionResult({ abi: SAFE_ABI, functionName: 'VERSION', data: await call(SAFE_V141_ADDRESSES.safe, encodeFunctionData({ abi: SAFE_ABI, functionName: 'VERSION' })) });
    expect(version).toBe('1.4.1');
    expect(safeArtifactBytecode('safe')).toMatch(/^0x60/);
  });

  it('creates a Safe with 3 owners and threshold 2, funded', async () => {
    const { address, owners, threshold } = devnet.safe;
    const onChainOwners = decodeFunctionResult({ abi: SAFE_ABI, functionName: 'getOwners', data: await call(address, encodeFunctionData({ abi: SAFE_ABI, functionName: 'getOwners' })) });
    expect([...onChainOwners].map((a) => getAddress(a)).sort()).toEqual(owners.map((o) => o.address).sort());
    expect(threshold).toBe(2);
    expect(BigInt(await call(address, encodeFunctionData({ abi: SAFE_ABI, functionName: 'getThreshold' })))).toBe(2n);
    expect(BigInt(await rawRpc<string>(devnet.rpcUrl, 'eth_getBalance', [address, 'latest']))).toBe(10n ** 19n);
    for (const o of owners) expect(privateKeyToAccount(o.privateKey).address).toBe(o.address);
  });

  it('deploys the hand-assembled test ERC-20, owned by the Safe', async () => {
    const { address } = devnet.token;
    expect(await read(address, 'name')).toBe('Vault Test Token');
    expect(await read(address, 'symbol')).toBe('VTT');
    expect(await read(address, 'decimals')).toBe(6);
    expect(getAddress((await read(address, 'owner')) as Address)).toBe(devnet.safe.address);
    expect(devnet.token.owner).toBe(devnet.safe.address);
    expect(await read(address, 'totalSupply')).toBe(1_000_000_000n);
    expect(await balanceOf(address, devnet.safe.address)).toBe(1_000_000_000n);
  });

  it('the token: mint only by its owner, transfer moves balances and reverts when short', async () => {
    const alice = devnet.accounts.funded[0]!;
    const bob = devnet.accounts.funded[1]!;
    const token = await devnet.deployToken(alice.address);
    const send = (from: Address, data: Hex) => rawRpc<Hex>(devnet.rpcUrl, 'eth_sendTransaction', [{ from, to: token, data }]);
    // anvil mines at once, but the receipt can lag the hash by a moment: poll, bounded.
    const receipt = async (hash: Hex) => {
      for (let i = 0; i < 100; i++) {
        const r = await rawRpc<{ status: string; logs: { topics: Hex[] }[] } | null>(devnet.rpcUrl, 'eth_getTransactionReceipt', [hash]);
        if (r !== null) return r;
        await new Promise((done) => setTimeout(done, 20));
      }
      throw new Error(`no receipt for ${hash} after 2 s`);
    };
    const mint = (to: Address, amount: bigint) => encodeFunctionData({ abi: TEST_TOKEN_ABI, functionName: 'mint', args: [to, amount] });
    const transfer = (to: Address, amount: bigint) => encodeFunctionData({ abi: TEST_TOKEN_ABI, functionName: 'transfer', args: [to, amount] });

    // Not the owner: mint reverts.
    await expect(call(token, mint(bob.address, 5n), bob.address)).rejects.toThrow(/revert/i);
    const minted = await receipt(await send(alice.address, mint(bob.address, 500n)));
    expect(minted.status).toBe('0x1');
    expect(minted.logs).toHaveLength(1);
    expect(await balanceOf(token, bob.address)).toBe(500n);
    expect(await read(token, 'totalSupply')).toBe(500n);
    // Bob sends 200 to Alice; 301 more than he has reverts.
    expect((await receipt(await send(bob.address, transfer(alice.address, 200n)))).status).toBe('0x1');
    expect(await balanceOf(token, bob.address)).toBe(300n);
    expect(await balanceOf(token, alice.address)).toBe(200n);
    await expect(call(token, transfer(alice.address, 301n), bob.address)).rejects.toThrow(/revert/i);
    // Unknown selector and plain value transfers revert.
    await expect(call(token, '0xdeadbeef')).rejects.toThrow(/revert/i);
    await expect(rawRpc(devnet.rpcUrl, 'eth_call', [{ from: alice.address, to: token, value: '0x1', data: transfer(bob.address, 1n) }, 'latest'])).rejects.toThrow(/revert/i);
    // Mint overflow reverts.
    await expect(call(token, mint(bob.address, 2n ** 256n - 1n), alice.address)).rejects.toThrow(/revert/i);
  });

  it('a bytes32-symbol variant answers symbol() with a bytes32', async () => {
    const token = await devnet.deployToken(devnet.safe.address, { symbol: 'MKR', stringEncoding: 'bytes32' });
    const raw = await call(token, '0x95d89b41');
    expect(raw).toBe(`0x${Buffer.from('MKR').toString('hex').padEnd(64, '0')}`);
  });

  it('resolves the pinned anvil binary', () => {
    expect(resolveAnvilPath()).toMatch(/anvil-linux-amd64\/bin\/anvil$|^anvil$/);
    expect(resolveAnvilPath('/opt/anvil')).toBe('/opt/anvil');
  });

  it('fails clearly when anvil cannot start, leaving nothing behind', async () => {
    await expect(startEvmDevnet({ anvilPath: '/nonexistent/anvil' })).rejects.toThrow(/cannot start anvil/);
  });
});

describe('stop', () => {
  it('stops anvil by PID and is idempotent', async () => {
    const other = await startEvmDevnet({ owners: 1, threshold: 1 });
    expect(() => process.kill(other.pid, 0)).not.toThrow();
    await other.stop();
    await other.stop();
    expect(() => process.kill(other.pid, 0)).toThrow();
  });
});
