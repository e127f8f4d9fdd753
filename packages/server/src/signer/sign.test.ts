import { canonicalize, DriverRegistry, formatUnits, InternalError, normalizeIntent, sha256Hex, TransportError, type ChainDriver, type ChainSigner } from '@vault/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { makeWorld, type World } from '../../test/signer/helpers.js';
import { summarize, verifyAndSign } from './sign.js';

describe('summarize', () => {
  const s = (req: Parameters<typeof normalizeIntent>[0]) => summarize(normalizeIntent(req), 'xrpl:testnet');
  const base = { wallet: 'w', destination: 'rYYY', amount: '1250' };
  it('says what is signed, one line per operation', () => {
    expect(s({ ...base, asset_symbol: 'USD', asset_issuer: 'rXXX', asset_decimals: 2 })).toBe('send 12.5 USD.rXXX to rYYY on xrpl:testnet');
    expect(s({ ...base, asset_symbol: 'XRP' })).toBe('send 0.00125 XRP to rYYY on xrpl:testnet');
    expect(s({ ...base, operation: { op: 'issue' }, asset_symbol: 'USD', asset_decimals: 0 })).toBe('issue 1250 USD to rYYY on xrpl:testnet');
    expect(s({ ...base, operation: { op: 'clawback' } })).toBe('claw back 0.00125 native from rYYY on xrpl:testnet');
    expect(s({ ...base, operation: { op: 'authorize_holder', revoke: true }, asset_symbol: 'USD' })).toBe('revoke holder rYYY of USD on xrpl:testnet');
    expect(s({ ...base, operation: { op: 'authorize_holder' }, asset_symbol: 'USD' })).toBe('authorize holder rYYY of USD on xrpl:testnet');
    expect(s({ ...base, operation: { op: 'mpt_create', asset_scale: 2, flags: 0x20 } })).toBe('create token (scale 2, flags 0x20) from w on xrpl:testnet');
    expect(s({ ...base, operation: { op: 'account_flags', set: 8 } })).toBe('set account flags (set 8, clear -) on w on xrpl:testnet');
    expect(s({ ...base, operation: { op: 'contract_call', data_hex: '0xa9059cbb' } })).toBe('call contract rYYY with 0.00125 native (4 bytes of data) on xrpl:testnet');
  });
  it('formats minor units exactly', () => {
    expect(formatUnits('0', 6)).toBe('0');
    expect(formatUnits('1000000', 6)).toBe('1');
    expect(formatUnits('1', 6)).toBe('0.000001');
    expect(formatUnits('123', 0)).toBe('123');
  });
});

describe('what a receipt commits to: the whole request', () => {
  let w: World;
  afterEach(() => w.cleanup());

  it("a signature's receipt body and a refusal's receipt body both commit to sha256 of the canonical request as sent", async () => {
    w = await makeWorld();
    const req = await w.request();
    const out = await verifyAndSign(req, w.deps);
    if (!out.ok) throw new Error(out.refusal.message);
    const c = out.response.signature;
    const body = { request: sha256Hex(canonicalize(req)), payload_digest: req.expected_payload_digest, signer_address: c.signer_address, public_key: c.public_key.hex, signature: c.signature.hex, summary: out.response.summary };
    expect(w.state.recent(1)[0]?.body_digest).toBe(sha256Hex(canonicalize(body)));

    const tampered = { ...(await w.request()), signer_address: 'mem1' + '00'.repeat(20) };
    const refused = await verifyAndSign(tampered, w.deps);
    if (refused.ok) throw new Error('signed a request for an address it does not hold');
    const refusedBody = { request: sha256Hex(canonicalize(tampered)), reason: refused.refusal.refused.reason, message: refused.refusal.message };
    expect(w.state.recent(1)[0]?.body_digest).toBe(sha256Hex(canonicalize(refusedBody)));
  });
});

describe('verifyAndSign with drivers that misbehave', () => {
  let w: World;
  afterEach(() => w.cleanup());

  it('a second payload is signed only once payloadFate says the first is dead', async () => {
    w = await makeWorld();
    const first = await w.request();
    expect((await verifyAndSign(first, w.deps)).ok).toBe(true);
    // Not yet expired: payloadFate says live, so a different payload is refused.
    const second = await w.request();
    if (second.params.kind !== 'xrpl') throw new Error('unexpected');
    second.params = { ...second.params, base_fee_drops: 11 };
    second.expected_payload_digest = w.driver.buildPayload({ intent: normalizeIntent(second.intent.request), wallet: w.wallet, params: second.params }).digest;
    const refused = await verifyAndSign(second, w.deps);
    expect(refused.ok ? 'signed' : refused.refusal.refused.reason).toBe('chain');
    expect(refused.ok ? '' : refused.refusal.message).toMatch(/is live on the ledger \(pending\)/);
    w.ledger.close(30);
    const third = await w.request();
    expect((await verifyAndSign(third, w.deps)).ok).toBe(true);
  });

  it('a ledger that cannot be reached is a chain refusal, never a guess', async () => {
    w = await makeWorld();
    expect((await verifyAndSign(await w.request(), w.deps)).ok).toBe(true);
    const broken: ChainDriver = { ...w.driver, payloadFate: async () => Promise.reject(new TransportError('ledger down')) };
    w.deps.drivers = new DriverRegistry<ChainDriver>([broken]);
    w.ledger.close(30);
    const out = await verifyAndSign(await w.request(), w.deps);
    expect(out.ok ? '' : out.refusal.message).toMatch(/cannot establish .* ledger down/);
  });

  it('attack: a driver without payloadFate that reached the signer anyway gets no second payload signed, whatever confirm says', async () => {
    w = await makeWorld();
    expect((await verifyAndSign(await w.request(), w.deps)).ok).toBe(true);
    // No fallback to confirm-by-digest: a confirm that swears the first payload is dead changes nothing.
    const { payloadFate: _omitted, ...rest } = w.driver;
    const old = { ...rest, confirm: async () => ({ status: 'failed' as const, txHash: 'x', code: 'tx_too_late', message: 'expired', dead: true }) } as unknown as ChainDriver;
    w.deps.drivers = new DriverRegistry<ChainDriver>([old]);
    w.ledger.close(30);
    const out = await verifyAndSign(await w.request(), w.deps);
    expect(out.ok ? 'signed' : out.refusal.refused.reason).toBe('chain');
    expect(out.ok ? '' : out.refusal.message).toMatch(/cannot establish on the ledger whether payload [0-9a-f]+ is dead/);
  });

  it('a driver fault while signing is a receipt of kind sign.fault and an error, not a signature', async () => {
    w = await makeWorld();
    const faulty: ChainSigner = { ...w.chainSigner, signPayload: async () => Promise.reject(new InternalError('hsm unplugged')) };
    w.deps.signers = new DriverRegistry<ChainSigner>([faulty]);
    await expect(verifyAndSign(await w.request(), w.deps)).rejects.toThrow(/hsm unplugged/);
    expect(w.state.recent(1)[0]?.kind).toBe('sign.fault');
    // The queue is not wedged by the fault.
    w.deps.signers = new DriverRegistry<ChainSigner>([w.chainSigner]);
    expect((await verifyAndSign(await w.request(), w.deps)).ok).toBe(true);
  });

  it('a ChainSigner that returns a contribution for another key is a fault', async () => {
    w = await makeWorld();
    const liar: ChainSigner = { ...w.chainSigner, signPayload: async (input) => ({ ...(await w.chainSigner.signPayload(input)), signer_address: `mem1${'99'.repeat(20)}` }) };
    w.deps.signers = new DriverRegistry<ChainSigner>([liar]);
    await expect(verifyAndSign(await w.request(), w.deps)).rejects.toThrow(/another key/);
  });

  it('a missing signing driver is a chain refusal', async () => {
    w = await makeWorld();
    w.deps.signers = new DriverRegistry<ChainSigner>();
    const out = await verifyAndSign(await w.request(), w.deps);
    expect(out.ok ? '' : out.refusal.refused.reason).toBe('chain');
  });
});

describe('the one-at-a-time queue', () => {
  let w: World;
  afterEach(() => w.cleanup());

  it('a burst of requests cannot starve the event loop: the queue yields to I/O between slices', async () => {
    w = await makeWorld();
    // No approvals: nothing waits on the thread pool, so every job is queued in the same turn
    // and, without yields, the whole burst would run as one chain of promise callbacks.
    const requests = await Promise.all(Array.from({ length: 200 }, (_, i) => w.request({ memo: `burst-${i}` }, { approvers: [] })));
    let turns = 0;
    let running = true;
    const tick = () => {
      turns += 1;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const outcomes = await Promise.all(requests.map((r) => verifyAndSign(r, w.deps)));
    running = false;
    expect(outcomes.every((o) => !o.ok && o.refusal.refused.reason === 'policy_denied')).toBe(true);
    // Jobs take a fraction of a millisecond and a slice is SERIAL_SLICE_MS: many turns (without yields, 2).
    expect(turns).toBeGreaterThan(5);
  });
});
