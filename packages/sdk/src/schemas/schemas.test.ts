import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import {
  ChainParamsSchema,
  DecisionSchema,
  IntentRequestSchema,
  jsonSchemas,
  labelString,
  parseWith,
  PolicySetSchema,
  SignedApprovalSchema,
  SignRequestSchema,
  SignResponseSchema,
  SignerRefusalSchema,
  SupplyReportSchema,
  WalletDescriptorSchema,
  WIRE_SCHEMAS,
} from './index.js';

const base = { wallet: 'w1', destination: 'rDest', amount: '100' };

function failure(schema: Parameters<typeof parseWith>[0], value: unknown, what = 'x'): ValidationError {
  try {
    parseWith(schema, value, what);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return e as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('IntentRequest', () => {
  it('accepts every operation variant', () => {
    const ops = [
      { op: 'transfer' },
      { op: 'issue' },
      { op: 'authorize_holder' },
      { op: 'authorize_holder', revoke: true },
      { op: 'clawback' },
      { op: 'mpt_create', asset_scale: 0, flags: 0 },
      { op: 'mpt_create', asset_scale: 19, flags: 0x7e, maximum_amount: '9223372036854775807', transfer_fee: 50000, metadata_hex: 'ab' },
      { op: 'mpt_create', asset_scale: 2, flags: 0x20, maximum_amount: null, transfer_fee: null, metadata_hex: null },
      { op: 'account_flags', set: 8 },
      { op: 'account_flags', set: null, clear: 6 },
      { op: 'contract_call', data_hex: '0xa9059cbb' },
    ];
    for (const operation of ops) expect(IntentRequestSchema.safeParse({ ...base, operation }).success, JSON.stringify(operation)).toBe(true);
  });

  it.each([
    ['amount as a number', { ...base, amount: 100 }, 'amount'],
    ['negative amount', { ...base, amount: '-1' }, 'amount'],
    ['decimal amount', { ...base, amount: '1.5' }, 'amount'],
    ['leading zero', { ...base, amount: '01' }, 'amount'],
    ['amount in exponent form', { ...base, amount: '1e6' }, 'amount'],
    ['79-digit amount', { ...base, amount: '1'.repeat(79) }, 'amount'],
    ['missing wallet', { destination: 'd', amount: '1' }, 'wallet'],
    ['empty destination', { ...base, destination: '' }, 'destination'],
    ['tag of one string', { ...base, tags: [['only']] }, 'tags.0'],
    ['tag of three strings', { ...base, tags: [['a', 'b', 'c']] }, 'tags.0'],
    ['tag with a number', { ...base, tags: [['a', 1]] }, 'tags.0.1'],
    ['asset_decimals fraction', { ...base, asset_decimals: 1.5 }, 'asset_decimals'],
    ['unknown field', { ...base, extra: 1 }, ''],
    ['unknown op', { ...base, operation: { op: 'teleport' } }, 'operation.op'],
    ['asset_scale 20', { ...base, operation: { op: 'mpt_create', asset_scale: 20, flags: 0 } }, 'operation.asset_scale'],
    ['asset_scale -1', { ...base, operation: { op: 'mpt_create', asset_scale: -1, flags: 0 } }, 'operation.asset_scale'],
    ['transfer_fee 50001', { ...base, operation: { op: 'mpt_create', asset_scale: 0, flags: 0, transfer_fee: 50001 } }, 'operation.transfer_fee'],
    ['unknown mpt flag bit', { ...base, operation: { op: 'mpt_create', asset_scale: 0, flags: 0x01 } }, 'operation.flags'],
    ['maximum_amount past 2^63-1', { ...base, operation: { op: 'mpt_create', asset_scale: 0, flags: 0, maximum_amount: '9223372036854775808' } }, 'operation.maximum_amount'],
    ['odd metadata hex', { ...base, operation: { op: 'mpt_create', asset_scale: 0, flags: 0, metadata_hex: 'abc' } }, 'operation.metadata_hex'],
    ['mpt_create without flags', { ...base, operation: { op: 'mpt_create', asset_scale: 0 } }, 'operation.flags'],
    ['data_hex with 7 digits', { ...base, operation: { op: 'contract_call', data_hex: '0xa9059cb' } }, 'operation.data_hex'],
    ['data_hex without 0x', { ...base, operation: { op: 'contract_call', data_hex: 'a9059cbb' } }, 'operation.data_hex'],
    ['data_hex with non-hex', { ...base, operation: { op: 'contract_call', data_hex: '0xa9059cbz' } }, 'operation.data_hex'],
    ['data_hex odd length', { ...base, operation: { op: 'contract_call', data_hex: '0xa9059cbb0' } }, 'operation.data_hex'],
    ['account_flags with neither', { ...base, operation: { op: 'account_flags' } }, 'operation.set'],
    ['revoke as string', { ...base, operation: { op: 'authorize_holder', revoke: 'yes' } }, 'operation.revoke'],
  ])('rejects %s naming %s', (_what, value, path) => {
    const e = failure(IntentRequestSchema, value, 'intent');
    expect(e.path).toBe(path);
    expect(e.code).toBe(4000);
    expect(e.message).toContain(path === '' ? 'invalid intent' : `invalid intent.${path}`);
  });

  it('accepts amounts past 2^64 as strings', () => {
    expect(IntentRequestSchema.safeParse({ ...base, amount: (2n ** 255n).toString() }).success).toBe(true);
  });
});

describe('SignedApproval', () => {
  const good = {
    approver_id: 'alice',
    intent: `int_${'ab'.repeat(32)}`,
    verdict: 'approve',
    at: 1767225600,
    strong_auth: true,
    signature: { curve: 'ed25519', sig: 'ab'.repeat(64) },
  };
  it('accepts a well-formed approval', () => expect(SignedApprovalSchema.safeParse(good).success).toBe(true));
  it.each([
    ['wrong curve', { ...good, signature: { curve: 'secp256k1', sig: good.signature.sig } }, 'signature.curve'],
    ['short sig', { ...good, signature: { curve: 'ed25519', sig: 'ab'.repeat(63) } }, 'signature.sig'],
    ['uppercase sig', { ...good, signature: { curve: 'ed25519', sig: 'AB'.repeat(64) } }, 'signature.sig'],
    ['intent without prefix', { ...good, intent: 'ab'.repeat(32) }, 'intent'],
    ['intent uppercase', { ...good, intent: `int_${'AB'.repeat(32)}` }, 'intent'],
    ['verdict maybe', { ...good, verdict: 'maybe' }, 'verdict'],
    ['at in milliseconds as float', { ...good, at: 1.5 }, 'at'],
    ['strong_auth missing', { ...good, strong_auth: undefined }, 'strong_auth'],
  ])('rejects %s', (_w, value, path) => expect(failure(SignedApprovalSchema, value).path).toBe(path));
});

describe('labelString (free text a person reads)', () => {
  const label = labelString(16);
  it('accepts letters, spaces, accents, emoji (paired surrogates) and the empty string', () => {
    for (const ok of ['', 'phone', "Anna's iPad", 'café Zürich', 'ключ 🔑', '鍵']) expect(label.safeParse(ok).success, ok).toBe(true);
  });
  it('refuses a lone surrogate (high or low), which could never be canonicalized or receipted', () => {
    for (const bad of ['x\ud800', '\udfffx', 'a\ud83d', '\ude00']) {
      expect(failure(label, bad, 'claim').issues[0]?.message).toMatch(/lone surrogate/);
    }
  });
  it('refuses control characters: C0, DEL, C1 and bidirectional overrides', () => {
    for (const bad of ['a\u0000', 'tab\there', 'line\n', 'del\u007f', 'c1\u0085', 'evil\u202etxt.exe', '\u2066x']) {
      expect(failure(label, bad, 'claim').issues[0]?.message).toMatch(/control characters/);
    }
  });
  it('keeps its bounds (length in UTF-16 units)', () => {
    expect(labelString(4, 1).safeParse('').success).toBe(false);
    expect(labelString(4).safeParse('abcde').success).toBe(false);
  });
});

describe('PolicySet and rules', () => {
  it('accepts extra properties on rules (interface.md)', () => {
    const p = PolicySetSchema.parse({ wallet: 'w', version: 1, rules: [{ rule: 'always_allow', note: 'x' }] });
    expect(p.rules[0]).toEqual({ rule: 'always_allow', note: 'x' });
  });
  it.each([
    [{ rule: 'hard_ceiling' }, 'rules.0.max'],
    [{ rule: 'operating_window_utc', start: '24:00', end: '01:00' }, 'rules.0.start'],
    [{ rule: 'operating_window_utc', start: '09:00', end: '17:00', days: [7] }, 'rules.0.days.0'],
    [{ rule: 'approval_threshold', above: '1', required_weight: 1, approvers: [] }, 'rules.0.approvers'],
    [{ rule: 'require_attestation', attesters: ['zz'] }, 'rules.0.attesters.0'],
    [{ rule: 'allow_operations', ops: ['fly'] }, 'rules.0.ops.0'],
  ])('rejects %j naming %s', (rule, path) => {
    expect(failure(PolicySetSchema, { wallet: 'w', version: 1, rules: [rule] }).path).toBe(path);
  });
});

describe('WalletDescriptor and ChainParams', () => {
  const signer = (address: string, weight = 1) => ({ address, curve: 'ed25519', weight, label: address });
  it('accepts both control kinds', () => {
    expect(WalletDescriptorSchema.safeParse({ wallet: 'w', chain: 'xrpl:testnet', control: { kind: 'native_multisig', address: 'rA', signers: [signer('r1'), signer('r2')], quorum: 2 } }).success).toBe(true);
    expect(WalletDescriptorSchema.safeParse({ wallet: 'w', chain: 'eip155:31337', control: { kind: 'evm_safe', safe: '0x1', owners: [{ ...signer('0xa'), curve: 'secp256k1' }], threshold: 1 } }).success).toBe(true);
  });
  it('rejects an unreachable quorum and duplicate signers', () => {
    expect(failure(WalletDescriptorSchema, { wallet: 'w', chain: 'c:x', control: { kind: 'native_multisig', address: 'rA', signers: [signer('r1')], quorum: 2 } }).path).toBe('control.quorum');
    expect(failure(WalletDescriptorSchema, { wallet: 'w', chain: 'c:x', control: { kind: 'native_multisig', address: 'rA', signers: [signer('r1'), signer('r1')], quorum: 1 } }).path).toBe('control.signers');
  });
  it('accepts the three ChainParams kinds and keeps int64 Stellar sequences exact as strings', () => {
    expect(ChainParamsSchema.parse({ kind: 'xrpl', sequence: 5, base_fee_drops: 10, last_ledger_sequence: 100, network_id: null }).kind).toBe('xrpl');
    expect(ChainParamsSchema.parse({ kind: 'stellar', sequence: '236025527107256321', base_fee_stroops: 100, max_time: 1767225600 })).toMatchObject({ sequence: '236025527107256321' });
    expect(ChainParamsSchema.parse({ kind: 'evm_safe', chain_id: 31337, safe_nonce: '0' }).kind).toBe('evm_safe');
    expect(failure(ChainParamsSchema, { kind: 'solana' }).path).toBe('kind');
  });
  it('lets a third-party driver carry its own params as kind custom', () => {
    expect(ChainParamsSchema.parse({ kind: 'custom', family: 'toy', fields: { height: 7, fee: '10', memo: null, final: true } }).kind).toBe('custom');
    expect(failure(ChainParamsSchema, { kind: 'custom', family: 'Toy!', fields: {} }).path).toBe('family');
    expect(failure(ChainParamsSchema, { kind: 'custom', family: 'toy', fields: { nested: { a: 1 } } }).path).toBe('fields.nested');
    expect(failure(ChainParamsSchema, { kind: 'custom', family: 'toy', fields: { big: 2 ** 60 } }).path).toBe('fields.big');
  });
});

describe('signer shapes', () => {
  it('SignerRefusal has exactly the spec reasons', () => {
    expect(SignerRefusalSchema.safeParse({ refused: { reason: 'digest_mismatch' }, message: 'x' }).success).toBe(true);
    expect(SignerRefusalSchema.safeParse({ refused: { reason: 'because' }, message: 'x' }).success).toBe(false);
  });
  it('SignRequest names a missing field', () => {
    expect(failure(SignRequestSchema, {}).path).toBe('intent');
  });
  it('SignResponse backend is software, yubihsm or pkcs11 (the one extension of the spec enum)', () => {
    const r = { signature: { signer_address: 'r1', public_key: { curve: 'ed25519', hex: 'ab' }, signature: { encoding: 'x', hex: 'cd' } }, backend: 'hsm', receipt_head: '0'.repeat(64), warnings: [], summary: '' };
    expect(failure(SignResponseSchema, r).path).toBe('backend');
    for (const backend of ['software', 'yubihsm', 'pkcs11']) expect(SignResponseSchema.safeParse({ ...r, backend }).success).toBe(true);
  });
  it('Decision is exact', () => {
    expect(DecisionSchema.safeParse({ decision: 'allow', reasons: [], required_weight: 0, current_weight: 0, not_before: 0 }).success).toBe(true);
    expect(DecisionSchema.safeParse({ decision: 'maybe', reasons: [], required_weight: 0, current_weight: 0, not_before: 0 }).success).toBe(false);
  });
});

describe('SupplyReport', () => {
  it('accepts a minimal document and rejects a non-ISO derivedAt', () => {
    const doc = {
      derivedAt: '2026-11-22T00:00:00Z',
      rule: 'every row comes from its query',
      chains: {
        xrpl: { endpoint: 'http://x', issuers: [{ account: 'rA', domain: null, obligations: { USD: '1.5e3' }, query: '{"method":"gateway_balances"}' }] },
        stellar: { endpoint: 'http://s', issuers: [{ issuer: '(2 locked issuers, 1 unit each)', locked: true, assets: { ABC: '1' }, query: 'GET /assets?asset_issuer=G' }] },
        solana: { endpoint: 'http://sol', mints: [] },
        polygon: { endpoint: 'http://p', owner: `0x${'1'.repeat(40)}`, contracts: [], query: 'eth_call', note: 'move ownership' },
      },
    };
    expect(SupplyReportSchema.safeParse(doc).success).toBe(true);
    expect(failure(SupplyReportSchema, { ...doc, derivedAt: 'yesterday' }).path).toBe('derivedAt');
  });
  it('accepts group members on Stellar rows and block-pinned provenance on Polygon rows', () => {
    const at = { ledger: 12, hash: `0x${'ab'.repeat(32)}` };
    const doc = {
      derivedAt: '2026-11-22T00:00:00Z',
      rule: 'r',
      chains: {
        xrpl: { endpoint: 'http://x', issuers: [] },
        stellar: { endpoint: 'http://s', issuers: [{ issuer: '(2 locked issuers, 1 unit each)', locked: true, assets: { ABC: '(2 issuers)' }, members: ['GA', 'GB'], query: 'GET /assets?asset_code=ABC' }] },
        solana: { endpoint: 'http://sol', mints: [] },
        polygon: {
          endpoint: 'http://p',
          owner: `0x${'1'.repeat(40)}`,
          contracts: [{ address: `0x${'2'.repeat(40)}`, label: 'T', supply: '1', query: '[{"method":"eth_call"}]', at, response_sha256: 'a'.repeat(64) }],
          query: 'eth_call',
          note: 'move ownership',
          at,
        },
      },
    };
    expect(SupplyReportSchema.safeParse(doc).success).toBe(true);
    const badMembers = structuredClone(doc);
    (badMembers.chains.stellar.issuers[0] as { members: string[] }).members = [];
    expect(failure(SupplyReportSchema, badMembers).path).toBe('chains.stellar.issuers.0.members');
    const badSha = structuredClone(doc);
    (badSha.chains.polygon.contracts[0] as { response_sha256: string }).response_sha256 = 'xyz';
    expect(failure(SupplyReportSchema, badSha).path).toBe('chains.polygon.contracts.0.response_sha256');
  });
  it('accepts a Polygon contract code_size that is a non-negative integer and refuses any other', () => {
    const contract = { address: `0x${'2'.repeat(40)}`, label: 'T', code_size: 1234 };
    const doc = (c: Record<string, unknown>) => ({
      derivedAt: '2026-11-22T00:00:00Z',
      rule: 'r',
      chains: {
        xrpl: { endpoint: 'http://x', issuers: [] },
        stellar: { endpoint: 'http://s', issuers: [] },
        solana: { endpoint: 'http://sol', mints: [] },
        polygon: { endpoint: 'http://p', owner: `0x${'1'.repeat(40)}`, contracts: [c], query: 'eth_call', note: 'n' },
      },
    });
    expect(SupplyReportSchema.safeParse(doc(contract)).success).toBe(true);
    expect(SupplyReportSchema.safeParse(doc({ ...contract, code_size: 0 })).success).toBe(true);
    for (const bad of [-1, 1.5, '1234', null]) {
      expect(failure(SupplyReportSchema, doc({ ...contract, code_size: bad })).path).toBe('chains.polygon.contracts.0.code_size');
    }
  });
});

describe('JSON Schema generation', () => {
  it('generates a JSON Schema for every wire resource from the runtime schemas', () => {
    const all = jsonSchemas();
    expect(Object.keys(all).sort()).toEqual(Object.keys(WIRE_SCHEMAS).sort());
    const intent = all.IntentRequest as { required: string[]; properties: Record<string, { pattern?: string }>; additionalProperties: boolean };
    expect(intent.required.sort()).toEqual(['amount', 'destination', 'wallet']);
    expect(intent.properties['amount']?.pattern).toBe('^(0|[1-9][0-9]*)$');
    expect(intent.additionalProperties).toBe(false);
    const approval = all.SignedApproval as { properties: { intent: { pattern: string } } };
    expect(approval.properties.intent.pattern).toBe('^int_[0-9a-f]{64}$');
  });
});

describe('issue #20: malformed input is a ValidationError naming the field, never a crash', () => {
  const mpt = (maximum_amount: unknown) => ({ ...base, operation: { op: 'mpt_create', asset_scale: 0, flags: 0, maximum_amount } });

  it.each([['abc'], ['1.5'], ['1e3'], ['\u0000'], ['\u202e'], ['x'.repeat(300 * 1024)], ['-0'], ['-1'], [' 1'], ['\ud800'], [''], [1.5], [-1], [true], [{}], [[]]])(
    'attack: mpt_create maximum_amount %j is refused naming operation.maximum_amount',
    (v) => {
      expect(failure(IntentRequestSchema, mpt(v), 'intent').path).toBe('operation.maximum_amount');
    },
  );

  it('maximum_amount up to 2^63-1 passes, as a number or a string', () => {
    expect(IntentRequestSchema.safeParse(mpt('9223372036854775807')).success).toBe(true);
    expect(IntentRequestSchema.safeParse(mpt(Number.MAX_SAFE_INTEGER)).success).toBe(true);
  });

  it('mpt flags past 32 bits are refused (the mask test alone reads only 32 bits)', () => {
    expect(failure(IntentRequestSchema, { ...base, operation: { op: 'mpt_create', asset_scale: 0, flags: 2 ** 33 } }, 'intent').path).toBe('operation.flags');
    expect(failure(IntentRequestSchema, { ...base, operation: { op: 'mpt_create', asset_scale: 0, flags: 2 ** 33 + 0x20 } }, 'intent').path).toBe('operation.flags');
  });

  it.each([['abc\u0000'], ['r\u202eDest'], ['rDest '], ['\u200brDest'], ['rDe\nst'], ['r\ud800']])('attack: destination %j with an invisible or control character is refused naming destination', (d) => {
    expect(failure(IntentRequestSchema, { ...base, destination: d }, 'intent').path).toBe('destination');
    expect(failure(IntentRequestSchema, { ...base, asset_issuer: d }, 'intent').path).toBe('asset_issuer');
  });
});

describe('attack: integers given as -0 are refused in every integer field, naming it', () => {
  /** Every path of `doc` whose value is a number. */
  const numberPaths = (doc: unknown, at: (string | number)[] = []): (string | number)[][] => {
    if (typeof doc === 'number') return [at];
    if (Array.isArray(doc)) return doc.flatMap((v, i) => numberPaths(v, [...at, i]));
    if (doc !== null && typeof doc === 'object') return Object.entries(doc).flatMap(([k, v]) => numberPaths(v, [...at, k]));
    return [];
  };
  const withNegativeZero = (doc: unknown, path: (string | number)[]): unknown => {
    const copy = structuredClone(doc) as Record<string | number, unknown>;
    let node = copy;
    for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
    node[path[path.length - 1] as string | number] = -0;
    return copy;
  };
  const member = { address: 'rA1', curve: 'ed25519', weight: 1, label: 'a' };
  const documents: [string, Parameters<typeof parseWith>[0], unknown][] = [
    ['IntentRequest mpt_create', IntentRequestSchema, { ...base, asset_decimals: 2, operation: { op: 'mpt_create', asset_scale: 2, flags: 32, maximum_amount: 1000, transfer_fee: 10 } }],
    ['IntentRequest account_flags', IntentRequestSchema, { ...base, operation: { op: 'account_flags', set: 8, clear: 6 } }],
    ['SignedApproval', SignedApprovalSchema, { approver_id: 'alice', intent: `int_${'ab'.repeat(32)}`, verdict: 'approve', at: 1767225600, strong_auth: true, signature: { curve: 'ed25519', sig: 'ab'.repeat(64) } }],
    ['WalletDescriptor', WalletDescriptorSchema, { wallet: 'w', chain: 'xrpl:testnet', control: { kind: 'native_multisig', address: 'rA', signers: [member, { ...member, address: 'rA2' }], quorum: 2 } }],
    ['PolicySet', PolicySetSchema, { wallet: 'w', version: 3, rules: [{ rule: 'approval_threshold', above: '1', required_weight: 2, approvers: [{ id: 'a', weight: 1 }, { id: 'b', weight: 1 }] }, { rule: 'timelock_above', above: '1', seconds: 60 }, { rule: 'operating_window_utc', start: '09:00', end: '17:00', days: [1, 2] }, { rule: 'daily_velocity_cap', limit: '5', window_seconds: 60 }] }],
    ['ChainParams xrpl', ChainParamsSchema, { kind: 'xrpl', sequence: 5, base_fee_drops: 10, last_ledger_sequence: 100, network_id: 1 }],
    ['ChainParams stellar', ChainParamsSchema, { kind: 'stellar', sequence: 7, base_fee_stroops: 100, max_time: 1767225600, thresholds: { low: 1, med: 2, high: 3 } }],
    ['ChainParams evm_safe', ChainParamsSchema, { kind: 'evm_safe', chain_id: 31337, safe_nonce: '0' }],
  ];

  it.each(documents)('%s', (_name, schema, doc) => {
    expect(schema.safeParse(doc).success).toBe(true);
    const paths = numberPaths(doc);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) {
      // 0 itself may be out of range for a field; -0 must be refused whether or not 0 is accepted
      const e = failure(schema, withNegativeZero(doc, path));
      expect(e.path, JSON.stringify(path)).toBe(path.join('.'));
    }
  });
});

describe('asset_symbol', () => {
  it('attack: an asset symbol spoofed with a right-to-left override', () => {
    const base = { wallet: 'ops', destination: 'rDest', amount: '1' };
    for (const symbol of ['\u202eCDSU', 'USD\u200bC', 'US\u0000DC', 'USDC ', '\u2066USDC\u2069']) {
      const r = IntentRequestSchema.safeParse({ ...base, asset_symbol: symbol });
      expect(r.success, JSON.stringify(symbol)).toBe(false);
      if (!r.success) expect(r.error.issues[0]?.path).toEqual(['asset_symbol']);
    }
    expect(IntentRequestSchema.safeParse({ ...base, asset_symbol: 'USDC.e' }).success).toBe(true);
  });
});
