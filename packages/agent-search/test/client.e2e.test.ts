/**
 * The paying client (src/client.ts) and the example script (examples/paying-client.mjs) against
 * a real server on a real chain: they pay within their limits and refuse, before signing,
 * anything above the per-call maximum, beyond the budget, or in a token they do not trust.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAnswerer, createSampleProvider } from '../src/answers/index.js';
import { createPayingClient, readPaymentReceipt } from '../src/client.js';
import { SpendLimitError } from '../src/payment/errors.js';
import { startServer, type RunningServer } from '../src/server.js';
import { localFacilitatorFor, startTestChain, type TestChain } from './helpers.js';

let chain: TestChain;
let server: RunningServer & { baseUrl: string };
let calls = 0;
let signatures = 0;
let dir: string;

beforeAll(async () => {
  chain = await startTestChain();
  dir = mkdtempSync(join(tmpdir(), 'agent-search-client-'));
  const facilitator = localFacilitatorFor(chain);
  const real = createAnswerer(createSampleProvider());
  server = await startServer({
    operator: 'Test Operator',
    answerer: { answer: (p, q) => ((calls += 1), real.answer(p, q)) },
    payment: {
      terms: chain.terms,
      // Counts every payment that reached the facilitator: a refused client must produce none.
      facilitator: { verify: (p, r) => ((signatures += 1), facilitator.verify(p, r)), settle: (p, r) => facilitator.settle(p, r) },
    },
  });
});

afterAll(async () => {
  await server?.close();
  await chain?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('createPayingClient', () => {
  test('pays a call within its limits and reports the receipt and what it signed', async () => {
    const client = createPayingClient({ privateKey: chain.payer.privateKey, maxPerCall: '0.05', totalBudget: '0.10', asset: chain.token, network: chain.network });
    const b0 = await chain.balanceOf(chain.payer.address);
    const res = await client.fetch(`${server.url}/api/x402/search?q=coffee`);
    expect(res.status).toBe(200);
    expect(readPaymentReceipt(res)?.success).toBe(true);
    expect(client.spent()).toEqual({ signed: 10_000n, remaining: 90_000n });
    expect(b0 - (await chain.balanceOf(chain.payer.address))).toBe(10_000n);
  });

  test('refuses, without signing, a call above the per-call maximum', async () => {
    const client = createPayingClient({ privateKey: chain.payer.privateKey, maxPerCall: '0.01', totalBudget: '1', asset: chain.token });
    const [c0, s0, b0] = [calls, signatures, await chain.balanceOf(chain.payer.address)];
    await expect(client.fetch(`${server.url}/api/x402/search?q=coffee&mode=deep`)).rejects.toBeInstanceOf(SpendLimitError);
    expect([calls, signatures]).toEqual([c0, s0]);
    expect(client.spent().signed).toBe(0n);
    expect(await chain.balanceOf(chain.payer.address)).toBe(b0);
  });

  test('refuses, without signing, a call beyond the total budget', async () => {
    const client = createPayingClient({ privateKey: chain.payer.privateKey, maxPerCall: '0.01', totalBudget: '0.012', asset: chain.token });
    expect((await client.fetch(`${server.url}/api/x402/places`)).status).toBe(200); // 0.002
    expect((await client.fetch(`${server.url}/api/x402/places`)).status).toBe(200); // 0.004
    const s0 = signatures;
    await expect(client.fetch(`${server.url}/api/x402/stack?parks=both&adults=2&days=2`)).rejects.toThrow(/budget/); // 0.01 > 0.008 left
    expect(signatures).toBe(s0);
    expect(client.spent()).toEqual({ signed: 4_000n, remaining: 8_000n });
  });

  test('concurrent calls cannot overrun the budget together', async () => {
    const client = createPayingClient({ privateKey: chain.payer.privateKey, maxPerCall: '0.01', totalBudget: '0.005', asset: chain.token });
    const results = await Promise.allSettled([1, 2, 3].map(() => client.fetch(`${server.url}/api/x402/places`)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2); // 2 × 0.002 ≤ 0.005
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(client.spent().signed).toBe(4_000n);
  });

  test('refuses a token it was not told to trust', async () => {
    const client = createPayingClient({ privateKey: chain.payer.privateKey, maxPerCall: '1', totalBudget: '1', asset: '0x0000000000000000000000000000000000000001' });
    const s0 = signatures;
    await expect(client.fetch(`${server.url}/api/x402/places`)).rejects.toBeInstanceOf(SpendLimitError);
    expect(signatures).toBe(s0);
  });
});

describe('examples/paying-client.mjs', () => {
  test('pays within its budget, refuses the call beyond it, and never prints the key', async () => {
    const keyFile = join(dir, 'payer.key');
    writeFileSync(keyFile, chain.payer2.privateKey, { mode: 0o600 });
    const script = fileURLToPath(new URL('../examples/paying-client.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, '/api/x402/search?q=coffee', '/api/x402/places', '/api/x402/search?q=tea&mode=deep'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: { ...process.env, AGENT_SEARCH_URL: server.url, X402_PAYER_KEY_FILE: keyFile, X402_ASSET: chain.token, X402_NETWORK: chain.network, X402_MAX_PRICE: '0.05', X402_BUDGET: '0.02' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ status: 200, paid: true });
    expect(lines[1]).toMatchObject({ status: 200, paid: true });
    expect(String(lines[2]?.refused)).toMatch(/budget/);
    expect(lines[3]).toMatchObject({ signedBaseUnits: '12000', budgetBaseUnits: '20000' });
    expect(code).toBe(1);
    expect(out + err).not.toContain(chain.payer2.privateKey.slice(2));
  });
});
