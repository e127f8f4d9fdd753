import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  InternalError,
  RefusedError,
  SessionError,
  TransportError,
  ValidationError,
  VaultError,
} from '../errors.js';
import type { SignRequest } from '../schemas/sign.js';
import { createSignerClient, SIGNER_TOKEN_HEADER, type SignerClient } from './index.js';

// ---------------------------------------------------------------- fixtures

const TOKEN = 'signer-T0ken_do-not-leak_fedcba9876543210';
const ID = `int_${'a'.repeat(64)}`;
const HEAD = 'b'.repeat(64);

const SIGN_REQUEST: SignRequest = {
  intent: { id: ID, created_at: 1_700_000_000, request: { wallet: 'ops', destination: 'rDest', amount: '1000' } },
  wallet: {
    wallet: 'ops',
    chain: 'xrpl:testnet',
    control: {
      kind: 'native_multisig',
      address: 'rVault',
      signers: [{ address: 'rS1', curve: 'ed25519', weight: 1, label: 's1' }],
      quorum: 1,
    },
  },
  policy: { wallet: 'ops', version: 1, rules: [{ rule: 'always_allow' }] },
  policy_digest: 'c'.repeat(64),
  approvals: [],
  params: { kind: 'xrpl', sequence: 1, base_fee_drops: 12, last_ledger_sequence: 100, network_id: null },
  protect: {
    known_destinations: ['rDest'],
    burned: [],
    evm_code: [],
    token_owner_burned: false,
    onchain_symbol: null,
    compliance_cleared: true,
    attestation_valid: true,
  },
  expected_payload_digest: 'f'.repeat(64),
  signer_address: 'rS1',
};

const SIGN_RESPONSE = {
  signature: {
    signer_address: 'rS1',
    public_key: { curve: 'ed25519', hex: 'ab'.repeat(32) },
    signature: { encoding: 'xrpl-signer', hex: 'cd'.repeat(64) },
  },
  backend: 'software',
  receipt_head: HEAD,
  warnings: [{ guard: 'address_poisoning', severity: 'warn', detail: 'similar to a known address' }],
  summary: 'signed 1000 drops to rDest',
};

interface Reply {
  status?: number;
  body?: unknown;
  contentType?: string;
  hang?: boolean;
}

const DEFAULT_ROUTES: Record<string, Reply> = {
  'GET /health': { body: { ok: true, receipt_head: HEAD } },
  'GET /keys': { body: [{ address: 'rS1', curve: 'ed25519', wallets: ['ops'] }] },
  'GET /receipts': { body: [] },
  'POST /sign': { body: SIGN_RESPONSE },
  'POST /observe': { body: { intentId: ID, first_seen_at: 1_700_000_100, timelock_from: 1_700_000_100, receipt_head: HEAD } },
  'POST /restrictions': { body: { received: HEAD, added: 1, count: 1, digest: HEAD, receipt_head: HEAD } },
  'GET /restrictions': { body: { count: 1, digest: HEAD, restrictions: [{ since: 1_700_000_000, restriction: { restriction: 'freeze_wallet', wallet: 'ops' } }] } },
};

// ---------------------------------------------------------------- server

interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let baseUrl: string;
let routes: Record<string, Reply> = {};
const requests: Recorded[] = [];

function send(res: ServerResponse, reply: Reply): void {
  if (reply.hang) return;
  const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  res.writeHead(reply.status ?? 200, {
    'content-type': reply.contentType ?? 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '/';
      requests.push({ method: req.method ?? '', url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const reply = routes[`${req.method} ${url.split('?', 1)[0] ?? url}`];
      send(res, reply ?? { status: 404, body: { error: { code: 4040, message: 'no route', data: null } } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  routes = { ...DEFAULT_ROUTES };
  requests.length = 0;
});

function last(): Recorded {
  const r = requests.at(-1);
  if (r === undefined) throw new Error('no request recorded');
  return r;
}

function signer(extra: Partial<Parameters<typeof createSignerClient>[0]> = {}): SignerClient {
  return createSignerClient({ baseUrl, token: TOKEN, ...extra });
}

async function failure(p: Promise<unknown>): Promise<VaultError> {
  const err = await p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VaultError);
  const e = err as VaultError;
  expect(e.message).not.toContain(TOKEN);
  expect(JSON.stringify(e.data)).not.toContain(TOKEN);
  return e;
}

// ---------------------------------------------------------------- tests

describe('signer client: endpoints', () => {
  it('health sends no token', async () => {
    expect(await signer().health()).toEqual({ ok: true, receipt_head: HEAD });
    const r = last();
    expect(r.method).toBe('GET');
    expect(r.url).toBe('/health');
    expect(r.headers[SIGNER_TOKEN_HEADER]).toBeUndefined();
    expect(r.headers['authorization']).toBeUndefined();
  });

  it('keys sends the signer token', async () => {
    expect(await signer().keys()).toEqual([{ address: 'rS1', curve: 'ed25519', wallets: ['ops'] }]);
    const r = last();
    expect(r.method).toBe('GET');
    expect(r.url).toBe('/keys');
    expect(r.headers[SIGNER_TOKEN_HEADER]).toBe(TOKEN);
    expect(r.headers['authorization']).toBeUndefined();
  });

  it('receipts sends ?limit= (default 20) with the token', async () => {
    await signer().receipts();
    expect(last().url).toBe('/receipts?limit=20');
    expect(last().headers[SIGNER_TOKEN_HEADER]).toBe(TOKEN);
    await signer().receipts(5);
    expect(last().url).toBe('/receipts?limit=5');
    await expect(signer().receipts(-1)).rejects.toBeInstanceOf(ValidationError);
    expect(requests).toHaveLength(2);
  });

  it('sign posts the request with the token and returns {ok: true, response}', async () => {
    const result = await signer().sign(SIGN_REQUEST);
    expect(result).toEqual({ ok: true, response: SIGN_RESPONSE });
    const r = last();
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/sign');
    expect(r.headers[SIGNER_TOKEN_HEADER]).toBe(TOKEN);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toEqual(SIGN_REQUEST);
    if (result.ok) expect(result.response.signature.signer_address).toBe('rS1');
  });

  it('observe posts the intent, wallet and policy (nothing to sign) with the token', async () => {
    const { intent, wallet, policy, policy_digest } = SIGN_REQUEST;
    const result = await signer().observe({ intent, wallet, policy, policy_digest });
    expect(result).toEqual({ ok: true, response: { intentId: ID, first_seen_at: 1_700_000_100, timelock_from: 1_700_000_100, receipt_head: HEAD } });
    const r = last();
    expect([r.method, r.url, r.headers[SIGNER_TOKEN_HEADER]]).toEqual(['POST', '/observe', TOKEN]);
    expect(JSON.parse(r.body)).toEqual({ intent, wallet, policy, policy_digest });
  });

  it('observe: a 403 refusal is an answer; a SignRequest is not an observe request and is refused before sending', async () => {
    const { intent, wallet, policy, policy_digest } = SIGN_REQUEST;
    routes['POST /observe'] = { status: 403, body: { refused: { reason: 'policy_mismatch' }, message: 'not the pinned policy' } };
    expect(await signer().observe({ intent, wallet, policy, policy_digest })).toEqual({ ok: false, refusal: { refused: { reason: 'policy_mismatch' }, message: 'not the pinned policy' } });
    const sent = requests.length;
    const err = await failure(signer().observe(SIGN_REQUEST as never));
    expect(err).toBeInstanceOf(ValidationError);
    expect(requests).toHaveLength(sent);
  });

  it('restrict posts {restrictions} with the token; restrictions() reads them back', async () => {
    const set = [{ restriction: 'revoke_approver' as const, approver_id: 'bob', public_key: 'ab'.repeat(32) }];
    expect(await signer().restrict(set)).toEqual({ received: HEAD, added: 1, count: 1, digest: HEAD, receipt_head: HEAD });
    const r = last();
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/restrictions');
    expect(r.headers[SIGNER_TOKEN_HEADER]).toBe(TOKEN);
    expect(JSON.parse(r.body)).toEqual({ restrictions: set });
    expect((await signer().restrictions()).restrictions[0]?.restriction).toEqual({ restriction: 'freeze_wallet', wallet: 'ops' });
    expect(last().headers[SIGNER_TOKEN_HEADER]).toBe(TOKEN);
  });

  it('restrict refuses, before sending, anything that is not a power-removing restriction', async () => {
    const bad = [{ restriction: 'unfreeze_wallet', wallet: 'ops' }] as never;
    const err = await failure(signer().restrict(bad));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).path).toBe('restrictions.0.restriction');
    expect(requests).toHaveLength(0);
  });
});

describe('signer client: refusals and errors', () => {
  it('a 403 refusal resolves {ok: false, refusal} with the reason', async () => {
    routes['POST /sign'] = {
      status: 403,
      body: { refused: { reason: 'digest_mismatch' }, message: 'rebuilt payload differs' },
    };
    const result = await signer().sign(SIGN_REQUEST);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.refusal.refused.reason).toBe('digest_mismatch');
    expect(result.refusal.message).toBe('rebuilt payload differs');
  });

  it('a 403 with an Error body (not a refusal) throws the typed error', async () => {
    routes['POST /sign'] = {
      status: 403,
      body: { error: { code: -32602, message: 'forbidden', data: { stage: 'auth' } } },
    };
    const err = await failure(signer().sign(SIGN_REQUEST));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.data).toEqual({ stage: 'auth' });
  });

  it('a 403 refusal with an unknown reason is not accepted as a refusal', async () => {
    routes['POST /sign'] = { status: 403, body: { refused: { reason: 'moon_phase' }, message: 'no' } };
    const err = await failure(signer().sign(SIGN_REQUEST));
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).status).toBe(403);
  });

  it('401 with an Error body throws SessionError', async () => {
    routes['POST /sign'] = { status: 401, body: { error: { code: 4100, message: 'bad signer token', data: null } } };
    const err = await failure(signer().sign(SIGN_REQUEST));
    expect(err).toBeInstanceOf(SessionError);
    expect(err.code).toBe(ErrorCode.Session);
  });

  it('401 with a non-JSON body throws TransportError with the status', async () => {
    routes['GET /keys'] = { status: 401, body: 'unauthorized', contentType: 'text/plain' };
    const err = await failure(signer().keys());
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).status).toBe(401);
  });

  it('500 with an Error body throws InternalError keeping data', async () => {
    routes['POST /sign'] = {
      status: 500,
      body: { error: { code: -32603, message: 'hsm offline', data: { backend: 'yubihsm' } } },
    };
    const err = await failure(signer().sign(SIGN_REQUEST));
    expect(err).toBeInstanceOf(InternalError);
    expect(err.data).toEqual({ backend: 'yubihsm' });
  });

  it('a server message echoing the token is redacted', async () => {
    routes['POST /sign'] = { status: 401, body: { error: { code: 4100, message: `token ${TOKEN} rejected`, data: null } } };
    const err = await failure(signer().sign(SIGN_REQUEST));
    expect(err.message).toBe('token [redacted] rejected');
  });

  it('a malformed SignResponse is a TransportError naming the field', async () => {
    routes['POST /sign'] = { body: { ...SIGN_RESPONSE, backend: 'paper' } };
    const err = await failure(signer().sign(SIGN_REQUEST));
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('backend');
    expect(err.data?.['path']).toBe('backend');
  });

  it('an invalid SignRequest is a ValidationError naming the field, with no request', async () => {
    const bad = { ...SIGN_REQUEST, expected_payload_digest: 'XYZ' };
    const err = await failure(signer().sign(bad));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).path).toBe('expected_payload_digest');
    expect(err.message).toContain('sign request.expected_payload_digest');
    const nested = { ...SIGN_REQUEST, params: { ...SIGN_REQUEST.params, base_fee_drops: 0 } } as SignRequest;
    const err2 = await failure(signer().sign(nested));
    expect((err2 as ValidationError).path).toBe('params.base_fee_drops');
    expect(requests).toHaveLength(0);
  });

  it('a timeout is a TransportError', async () => {
    routes['POST /sign'] = { hang: true };
    const err = await failure(signer({ timeoutMs: 100 }).sign(SIGN_REQUEST));
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('within 100 ms');
  });

  it('a refused connection is a TransportError', async () => {
    const spare = createServer();
    await new Promise<void>((resolve) => spare.listen(0, '127.0.0.1', resolve));
    const port = (spare.address() as AddressInfo).port;
    await new Promise<void>((resolve) => spare.close(() => resolve()));
    const err = await failure(createSignerClient({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN }).sign(SIGN_REQUEST));
    expect(err).toBeInstanceOf(TransportError);
    expect(err.cause).toBeDefined();
  });

  it('an oversized reply is refused', async () => {
    routes['GET /receipts'] = { body: Array.from({ length: 100 }, (_, i) => ({ seq: i, hash: HEAD })) };
    const err = await failure(signer({ maxResponseBytes: 512 }).receipts());
    expect(err).toBeInstanceOf(TransportError);
  });

  it('a token that cannot travel in a header is refused without echoing it', () => {
    expect(() => createSignerClient({ baseUrl, token: '' })).toThrow(SessionError);
    let caught: unknown;
    try {
      createSignerClient({ baseUrl, token: `${TOKEN}\n` });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(SessionError);
    expect((caught as Error).message).not.toContain(TOKEN);
  });
});
