/** Config validation: defaults, and every refusal names the field path. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseConfig, DEFAULT_HTTP, DEFAULT_POLYGON_NOTE } from '../src/index.js';

const valid = () => ({
  xrpl: { endpoint: 'https://xrplcluster.com', issuers: ['rvYAfWj5gh67oV6fW32ZzP3Aw4Eubs59B', { account: 'rMxCKbEDwqr76QuheSUMdEGf4B9xJ8m5De', provider: 'Ripple' }] },
  stellar: { endpoint: 'https://horizon.stellar.org', issuers: ['GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN'] },
  solana: { endpoint: 'https://api.mainnet-beta.solana.com', mints: [{ mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', label: 'USDC' }] },
  polygon: { endpoint: { url: 'https://polygon.example/v2/${POLY_KEY}', publicUrl: 'https://polygon.example/v2', rateLimit: { perSecond: 5 } }, owner: `0x${'ab'.repeat(20)}`, contracts: [{ address: `0x${'cd'.repeat(20)}`, label: 'Token' }] },
});

function errorOf(mutate: (c: Record<string, any>) => void): string {
  const c = valid() as Record<string, any>;
  mutate(c);
  try {
    parseConfig(c);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a config error');
}

describe('config', () => {
  it('fills defaults', () => {
    const c = parseConfig(valid());
    expect(c.http).toEqual(DEFAULT_HTTP);
    expect(c.xrpl.issuers).toEqual([{ account: 'rvYAfWj5gh67oV6fW32ZzP3Aw4Eubs59B' }, { account: 'rMxCKbEDwqr76QuheSUMdEGf4B9xJ8m5De', provider: 'Ripple' }]);
    expect(c.polygon.note).toBe(DEFAULT_POLYGON_NOTE);
    expect(c.polygon.endpoint.rateLimit).toEqual({ perSecond: 5, burst: 1 });
    expect(c.solana.commitment).toBe('finalized');
    expect(c.stellar.groupLockedMin).toBe(2);
  });

  it.each([
    ['a missing chain', (c: any) => delete c.stellar, 'stellar: expected an object'],
    ['an unknown top-level key', (c: any) => (c.ethereum = {}), 'ethereum: unknown field'],
    ['a bad XRPL account', (c: any) => (c.xrpl.issuers[1].account = 'rNOPE'), 'xrpl.issuers[1].account: not a valid XRPL classic address'],
    ['a duplicate XRPL account', (c: any) => c.xrpl.issuers.push('rvYAfWj5gh67oV6fW32ZzP3Aw4Eubs59B'), 'xrpl.issuers[2]: duplicate account'],
    ['an unknown issuer field', (c: any) => (c.xrpl.issuers[1].domain = 'x'), 'xrpl.issuers[1].domain: unknown field'],
    ['a bad Stellar issuer', (c: any) => (c.stellar.issuers[0] = 'GABC'), 'stellar.issuers[0]: not a Stellar G… account'],
    ['a Solana mint with 0 (not base58)', (c: any) => (c.solana.mints[0].mint = '0'.repeat(44)), 'solana.mints[0].mint: not a base58 Solana address'],
    ['a mint without label', (c: any) => delete c.solana.mints[0].label, 'solana.mints[0].label: expected a non-empty string'],
    ['a bad commitment', (c: any) => (c.solana.commitment = 'processed'), 'solana.commitment: expected "finalized" or "confirmed"'],
    ['a short polygon owner', (c: any) => (c.polygon.owner = '0x12'), 'polygon.owner: not a 0x-prefixed 20-byte address'],
    ['a bad contract address', (c: any) => (c.polygon.contracts[0].address = 'cd'.repeat(20)), 'polygon.contracts[0].address: not a 0x-prefixed 20-byte address'],
    ['a negative rate', (c: any) => (c.polygon.endpoint.rateLimit.perSecond = -1), 'polygon.endpoint.rateLimit.perSecond: expected a positive number'],
    ['a zero burst', (c: any) => (c.polygon.endpoint.rateLimit.burst = 0), 'polygon.endpoint.rateLimit.burst: expected an integer from 1'],
    ['an endpoint without url', (c: any) => (c.xrpl.endpoint = { publicUrl: 'https://x' }), 'xrpl.endpoint.url: expected a non-empty string'],
    ['a fractional concurrency', (c: any) => (c.http = { concurrency: 1.5 }), 'http.concurrency: expected an integer from 1 to 64'],
    ['an unknown http key', (c: any) => (c.http = { retry: 3 }), 'http.retry: unknown field'],
    ['issuers not an array', (c: any) => (c.xrpl.issuers = 'r1'), 'xrpl.issuers: expected an array'],
  ])('refuses %s, naming the field', (_name, mutate, message) => {
    expect(errorOf(mutate)).toContain(message);
  });

  it('the shipped example config is valid', () => {
    const example = JSON.parse(readFileSync(new URL('../examples/supply-report.config.json', import.meta.url), 'utf8'));
    expect(() => parseConfig(example)).not.toThrow();
  });
});
