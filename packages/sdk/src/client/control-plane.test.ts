import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  InternalError,
  RefusedError,
  SessionError,
  SignerRefusedError,
  TransportError,
  ValidationError,
  VaultError,
} from '../errors.js';
import { createControlPlaneClient, type ControlPlaneClient } from './index.js';

// ---------------------------------------------------------------- fixtures

const TOKEN = 'tok_S3cr3t-Session-Token_0123456789abcdef';
const PASSPHRASE = 'correct horse battery staple';
const ID = `int_${'a'.repeat(64)}`;
const HEAD = 'b'.repeat(64);
const DECISION = { decision: 'allow', reasons: [], required_weight: 0, current_weight: 0, not_before: 0 };
const INTENT_REQUEST = { wallet: 'ops', destination: 'rDestination', amount: '1000000' };
const APPROVAL = {
  approver_id: 'alice',
  intent: ID,
  verdict: 'approve' as const,
  at: 1_700_000_000,
  strong_auth: true,
  signature: { curve: 'ed25519' as const, sig: 'c'.repeat(128) },
};
const OUTCOME = {
  intentId: ID,
  status: 'confirmed',
  txHash: 'ABCDEF',
  chain: 'xrpl:testnet',
  operation: 'transfer',
  summary: 'sent 1 XRP',
  weight: 2,
  quorum: 2,
  signers: [{ signer: 's1', address: 'rS1', ok: true, detail: 'signed' }],
  submit: { engine_result: 'tesSUCCESS' },
  receiptHead: HEAD,
  findings: [],
};

interface Reply {
  status?: number;
  /** JSON body; a string is sent as is with `contentType`. */
  body?: unknown;
  contentType?: string;
  /** Never answer. */
  hang?: boolean;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Stream this many bytes of JSON in chunks without a Content-Length. */
  stream?: number;
}

const DEFAULT_ROUTES: Record<string, Reply> = {
  'GET /health': { body: { ok: true, receipt_head: HEAD } },
  'POST /session/unlock': { body: { token: TOKEN, expires_at: 1_700_000_900, accounts: ['ops'] } },
  'POST /session/lock': { body: { ok: true } },
  'GET /wallets': { body: [{ wallet: 'ops', chain: 'xrpl:testnet' }] },
  'GET /policy/ops%2Fmain': { body: { wallet: 'ops/main', version: 1, rules: [{ rule: 'always_allow' }] } },
  'GET /assets': { body: { assets: [], reserved: ['USDC'] } },
  'POST /intent': { body: { intentId: ID, status: 'allowed', decision: DECISION, receipt_head: HEAD } },
  'GET /intents': { body: [{ intentId: ID, status: 'allowed' }] },
  [`GET /intent/${ID}`]: {
    body: {
      intentId: ID,
      status: 'allowed',
      decision: DECISION,
      intent: INTENT_REQUEST,
      created_at: 1_700_000_000,
      approvals: [APPROVAL],
      execution: null,
    },
  },
  [`GET /intent/${ID}/protect`]: { body: { intentId: ID, blocked: false, findings: [] } },
  [`POST /intent/${ID}/approve-signed`]: { body: { intentId: ID, status: 'allowed', decision: DECISION } },
  [`POST /intent/${ID}/approve`]: { body: { intentId: ID, status: 'pending_approvals' } },
  [`POST /intent/${ID}/execute`]: { body: OUTCOME },
  [`POST /intent/${ID}/cancel`]: { body: { intentId: ID, status: 'cancelled', by: 'operator', cancelled_at: 1_700_000_100, receipt_head: HEAD, signers: [] } },
  'GET /estate': { body: { ops: { balances: [] } } },
  'GET /wallets/ops/reconcile': { body: { clean: true, checked: ['signers'], drift: [] } },
  'GET /ledger/verify': { body: { verified: true, receipts: 3, head: HEAD, signerPublicKey: 'd'.repeat(64) } },
  'GET /ledger/recent': { body: [] },
  'POST /admin/reload': { status: 200, body: '' },
  'POST /snapshot': { body: { wallets: [], intents: [] } },
  'GET /recovery/status': { body: { ops: { tier: 1 } } },
  'POST /pair/create': { body: { code: 'PAIR-1234', challenge: 'e'.repeat(64), expires_at: 1_700_000_300 } },
  'POST /pair/claim': { body: { ok: true, device: 'dev_1' } },
  'GET /devices': { body: [{ id: 'dev_1', role: 'approver' }] },
  'POST /devices/dev%201/revoke': { body: { revoked: true } },
  'GET /hang': { hang: true },
};

// ---------------------------------------------------------------- server

interface Recorded {
  method: string;
  /** Raw request target, path and query as sent. */
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
  const status = reply.status ?? 200;
  if (reply.stream !== undefined) {
    res.writeHead(status, { 'content-type': 'application/json' });
    const chunk = ' '.repeat(1024);
    let left = reply.stream;
    res.write('[');
    const tick = (): void => {
      if (res.destroyed) return;
      if (left <= 0) {
        res.end(']');
        return;
      }
      left -= chunk.length;
      res.write(chunk, tick);
    };
    tick();
    return;
  }
  const text =
    typeof reply.body === 'string' || Buffer.isBuffer(reply.body) ? reply.body : JSON.stringify(reply.body);
  res.writeHead(status, {
    'content-type': reply.contentType ?? 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...reply.headers,
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
      const pathname = url.split('?', 1)[0] ?? url;
      const reply = routes[`${req.method} ${pathname}`];
      if (reply === undefined) {
        send(res, { status: 404, body: { error: { code: 4040, message: `no route ${pathname}`, data: null } } });
      } else {
        send(res, reply);
      }
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

function client(extra: Partial<Parameters<typeof createControlPlaneClient>[0]> = {}): ControlPlaneClient {
  return createControlPlaneClient({ baseUrl, token: TOKEN, ...extra });
}

/** Awaits a rejection and returns the error, asserting the token never leaks into its message. */
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
  expect(e.message).not.toContain(PASSPHRASE);
  expect(JSON.stringify(e.data)).not.toContain(TOKEN);
  return e;
}

// ---------------------------------------------------------------- tests

describe('control-plane client: endpoints', () => {
  type Case = [
    name: string,
    call: (c: ControlPlaneClient) => Promise<unknown>,
    method: string,
    url: string,
    auth: boolean,
    body?: unknown,
  ];
  const cases: Case[] = [
    ['health', (c) => c.health(), 'GET', '/health', false],
    ['lock', (c) => c.lock(), 'POST', '/session/lock', true],
    ['wallets', (c) => c.wallets(), 'GET', '/wallets', true],
    ['policy', (c) => c.policy('ops/main'), 'GET', '/policy/ops%2Fmain', true],
    ['assets', (c) => c.assets(), 'GET', '/assets', true],
    ['createIntent', (c) => c.createIntent(INTENT_REQUEST), 'POST', '/intent', true, INTENT_REQUEST],
    ['intents', (c) => c.intents(), 'GET', '/intents', true],
    ['intent', (c) => c.intent(ID), 'GET', `/intent/${ID}`, true],
    ['protect', (c) => c.protect(ID), 'GET', `/intent/${ID}/protect`, true],
    ['approveSigned', (c) => c.approveSigned(ID, APPROVAL), 'POST', `/intent/${ID}/approve-signed`, true, APPROVAL],
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    ['approveUnsigned', (c) => c.approveUnsigned(ID), 'POST', `/intent/${ID}/approve`, true],
    ['execute', (c) => c.execute(ID), 'POST', `/intent/${ID}/execute`, true],
    ['estate', (c) => c.estate(), 'GET', '/estate', true],
    ['reconcile', (c) => c.reconcile('ops'), 'GET', '/wallets/ops/reconcile', true],
    ['ledgerVerify', (c) => c.ledgerVerify(), 'GET', '/ledger/verify', true],
    ['ledgerRecent default', (c) => c.ledgerRecent(), 'GET', '/ledger/recent?limit=50', true],
    ['ledgerRecent 7', (c) => c.ledgerRecent(7), 'GET', '/ledger/recent?limit=7', true],
    ['reload', (c) => c.reload(), 'POST', '/admin/reload', true],
    ['snapshot', (c) => c.snapshot(), 'POST', '/snapshot', true],
    ['snapshot with body', (c) => c.snapshot({ wallet: 'ops' }), 'POST', '/snapshot', true, { wallet: 'ops' }],
    ['recoveryStatus', (c) => c.recoveryStatus(), 'GET', '/recovery/status', true],
    [
      'pairCreate',
      (c) => c.pairCreate({ role: 'approver', label: 'phone' }),
      'POST',
      '/pair/create',
      true,
      { role: 'approver', label: 'phone' },
    ],
    [
      'pairClaim',
      (c) => c.pairClaim({ code: 'PAIR-1234', public_key: 'f'.repeat(64), signature: '0'.repeat(128), label: 'phone' }),
      'POST',
      '/pair/claim',
      false,
      { code: 'PAIR-1234', public_key: 'f'.repeat(64), signature: '0'.repeat(128), label: 'phone' },
    ],
    ['devices', (c) => c.devices(), 'GET', '/devices', true],
    ['revokeDevice', (c) => c.revokeDevice('dev 1'), 'POST', '/devices/dev%201/revoke', true],
    ['cancel by the operator', (c) => c.cancel(ID), 'POST', `/intent/${ID}/cancel`, true, {}],
    [
      'cancel by a device',
      (c) => c.cancel(ID, { by: 'device:dana', at: 1_700_000_100, signature: { curve: 'ed25519', sig: '0'.repeat(128) } }),
      'POST',
      `/intent/${ID}/cancel`,
      true,
      { by: 'device:dana', at: 1_700_000_100, signature: { curve: 'ed25519', sig: '0'.repeat(128) } },
    ],
  ];

  it.each(cases)('%s sends the right method, path, auth and body', async (_name, call, method, url, auth, body) => {
    const c = client();
    await call(c);
    expect(requests).toHaveLength(1);
    const r = last();
    expect(r.method).toBe(method);
    expect(r.url).toBe(url);
    expect(r.headers['authorization']).toBe(auth ? `Bearer ${TOKEN}` : undefined);
    expect(r.headers['accept']).toBe('application/json');
    if (body === undefined) {
      expect(r.body).toBe('');
      expect(r.headers['content-type']).toBeUndefined();
    } else {
      expect(r.headers['content-type']).toBe('application/json');
      expect(JSON.parse(r.body)).toEqual(body);
    }
  });

  it('returns typed, checked bodies', async () => {
    const c = client();
    expect(await c.health()).toEqual({ ok: true, receipt_head: HEAD });
    expect((await c.policy('ops/main')).rules[0]?.rule).toBe('always_allow');
    const created = await c.createIntent(INTENT_REQUEST);
    expect(created).toMatchObject({ intentId: ID, status: 'allowed', receipt_head: HEAD });
    const stored = await c.intent(ID);
    expect(stored.approvals[0]?.approver_id).toBe('alice');
    expect((await c.protect(ID)).blocked).toBe(false);
    expect((await c.approveSigned(ID, APPROVAL)).status).toBe('allowed');
    const outcome = await c.execute(ID);
    expect(outcome.status).toBe('confirmed');
    expect(outcome.signers[0]?.ok).toBe(true);
    expect((await c.reconcile('ops')).clean).toBe(true);
    expect((await c.ledgerVerify()).head).toBe(HEAD);
    expect(await c.wallets()).toEqual([{ wallet: 'ops', chain: 'xrpl:testnet' }]);
    expect(await c.reload()).toBeUndefined(); // empty 200 body
    expect((await c.pairCreate({ role: 'viewer', label: 'tablet' })).code).toBe('PAIR-1234');
  });

  it('pairQrUrl builds the URL without a request', () => {
    const c = client();
    expect(c.pairQrUrl('A B/1')).toBe(`${baseUrl}/pair/qr/A%20B%2F1`);
    expect(requests).toHaveLength(0);
  });

  it('keeps a base path prefix and drops trailing slashes', async () => {
    routes['GET /vault/health'] = { body: { ok: true } };
    const c = createControlPlaneClient({ baseUrl: `${baseUrl}/vault/` });
    expect(await c.health()).toEqual({ ok: true });
    expect(last().url).toBe('/vault/health');
  });
});

describe('control-plane client: session', () => {
  it('unlock names an operator account when asked', async () => {
    const c = createControlPlaneClient({ baseUrl });
    await c.unlock(PASSPHRASE, { name: 'olga' });
    expect(JSON.parse(last().body)).toEqual({ name: 'olga', passphrase: PASSPHRASE });
    expect(c.getToken()).toBe(TOKEN);
  });

  it('unlock sends the passphrase without auth and stores the token', async () => {
    const c = createControlPlaneClient({ baseUrl });
    expect(c.hasSession()).toBe(false);
    const result = await c.unlock(PASSPHRASE);
    expect(result).toEqual({ token: TOKEN, expires_at: 1_700_000_900, accounts: ['ops'] });
    const r = last();
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/session/unlock');
    expect(r.headers['authorization']).toBeUndefined();
    expect(JSON.parse(r.body)).toEqual({ passphrase: PASSPHRASE });
    expect(c.hasSession()).toBe(true);
    expect(c.getToken()).toBe(TOKEN);

    await c.wallets();
    expect(last().headers['authorization']).toBe(`Bearer ${TOKEN}`);
  });

  it('lock forgets the token', async () => {
    const c = client();
    await c.lock();
    expect(c.hasSession()).toBe(false);
    const before = requests.length;
    await expect(c.wallets()).rejects.toBeInstanceOf(SessionError);
    expect(requests).toHaveLength(before);
  });

  it('a session method without a token throws SessionError before any request', async () => {
    const c = createControlPlaneClient({ baseUrl });
    const calls: ((c: ControlPlaneClient) => Promise<unknown>)[] = [
      (x) => x.lock(),
      (x) => x.wallets(),
      (x) => x.policy('ops'),
      (x) => x.assets(),
      (x) => x.createIntent(INTENT_REQUEST),
      (x) => x.intents(),
      (x) => x.intent(ID),
      (x) => x.protect(ID),
      (x) => x.approveSigned(ID, APPROVAL),
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      (x) => x.approveUnsigned(ID),
      (x) => x.execute(ID),
      (x) => x.estate(),
      (x) => x.reconcile('ops'),
      (x) => x.ledgerVerify(),
      (x) => x.ledgerRecent(),
      (x) => x.reload(),
      (x) => x.snapshot(),
      (x) => x.recoveryStatus(),
      (x) => x.pairCreate({ role: 'approver', label: 'phone' }),
      (x) => x.devices(),
      (x) => x.revokeDevice('dev_1'),
    ];
    for (const call of calls) {
      const err = await failure(call(c));
      expect(err).toBeInstanceOf(SessionError);
      expect(err.code).toBe(ErrorCode.Session);
    }
    expect(requests).toHaveLength(0);
  });

  it('lock on a session the server no longer knows forgets the token too', async () => {
    routes['POST /session/lock'] = { status: 401, body: { error: { code: 4100, message: 'expired', data: null } } };
    const c = client();
    await expect(c.lock()).rejects.toBeInstanceOf(SessionError);
    expect(c.hasSession()).toBe(false);
  });

  it('unlock needs a passphrase', async () => {
    await expect(createControlPlaneClient({ baseUrl }).unlock('')).rejects.toBeInstanceOf(SessionError);
    expect(requests).toHaveLength(0);
  });

  it('a wrong passphrase is a SessionError and stores nothing', async () => {
    routes['POST /session/unlock'] = {
      status: 401,
      body: { error: { code: 4100, message: 'wrong passphrase', data: null } },
    };
    const c = createControlPlaneClient({ baseUrl });
    const err = await failure(c.unlock(PASSPHRASE));
    expect(err).toBeInstanceOf(SessionError);
    expect(c.hasSession()).toBe(false);
  });

  it('a redacted passphrase "a" leaves "wrong passphrase" readable', async () => {
    routes['POST /session/unlock'] = {
      status: 401,
      body: { error: { code: 4100, message: 'wrong passphrase', data: null } },
    };
    const err = await failure(createControlPlaneClient({ baseUrl }).unlock('a'));
    expect(err).toBeInstanceOf(SessionError);
    expect(err.message).toBe('wrong passphrase');
  });

  it('a short passphrase the server echoes as a value is still redacted', async () => {
    routes['POST /session/unlock'] = {
      status: 401,
      body: { error: { code: 4100, message: 'wrong passphrase "a" (a, tried: a)', data: null } },
    };
    const err = await failure(createControlPlaneClient({ baseUrl }).unlock('a'));
    expect(err.message).toBe('wrong passphrase "[redacted]" ([redacted], tried: [redacted])');
  });

  it('refuses a token that cannot travel in a header, without echoing it', () => {
    const bad = `${TOKEN}\r\nx-evil: 1`;
    let caught: unknown;
    try {
      createControlPlaneClient({ baseUrl, token: bad });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(SessionError);
    expect((caught as Error).message).not.toContain(TOKEN);
  });
});

describe('control-plane client: wire errors', () => {
  it('4000 maps to a bad-request VaultError keeping data.path', async () => {
    routes['POST /intent'] = {
      status: 400,
      body: { error: { code: 4000, message: 'invalid intent.amount', data: { path: 'amount', issues: [] } } },
    };
    const err = await failure(client().createIntent(INTENT_REQUEST));
    expect(err.code).toBe(ErrorCode.BadRequest);
    expect(err.data).toEqual({ path: 'amount', issues: [] });
    expect((err as VaultError & { path?: string }).path).toBe('amount');
  });

  it('4000 on approve-signed (unknown approver) keeps data', async () => {
    routes[`POST /intent/${ID}/approve-signed`] = {
      status: 400,
      body: { error: { code: 4000, message: 'unknown approver', data: { path: 'approver_id' } } },
    };
    const err = await failure(client().approveSigned(ID, APPROVAL));
    expect(err.code).toBe(4000);
    expect(err.shortMessage).toBe('unknown approver');
    expect(err.data?.['path']).toBe('approver_id');
  });

  it('4100 maps to SessionError', async () => {
    routes['GET /wallets'] = { status: 401, body: { error: { code: 4100, message: 'session expired', data: null } } };
    const err = await failure(client().wallets());
    expect(err).toBeInstanceOf(SessionError);
    expect(err.code).toBe(4100);
    expect(err.data).toBeNull();
  });

  it('4040 maps to a not-found VaultError', async () => {
    const other = `int_${'9'.repeat(64)}`;
    const err = await failure(client().intent(other));
    expect(err.code).toBe(ErrorCode.NotFound);
    expect(err.shortMessage).toBe(`no route /intent/${other}`);
  });

  it('-32602 maps to RefusedError keeping data', async () => {
    routes['POST /pair/create'] = {
      status: 403,
      body: { error: { code: -32602, message: 'viewer may not pair', data: { role: 'viewer' } } },
    };
    const err = await failure(client().pairCreate({ role: 'approver', label: 'x' }));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.code).toBe(ErrorCode.Refused);
    expect(err.data).toEqual({ role: 'viewer' });
  });

  it('-32603 maps to InternalError keeping data', async () => {
    routes['GET /estate'] = {
      status: 500,
      body: { error: { code: -32603, message: 'ledger unreachable', data: { chain: 'xrpl:testnet' } } },
    };
    const err = await failure(client().estate());
    expect(err).toBeInstanceOf(InternalError);
    expect(err.code).toBe(ErrorCode.Internal);
    expect(err.data).toEqual({ chain: 'xrpl:testnet' });
  });

  it("execute's HTTP 500 signer refusal keeps data.stage and data.reason", async () => {
    routes[`POST /intent/${ID}/execute`] = {
      status: 500,
      body: {
        error: {
          code: -32602,
          message: 'signer s1 refused',
          data: { stage: 'signers', reason: 'policy_mismatch', signer: 's1' },
        },
      },
    };
    const err = await failure(client().execute(ID));
    expect(err).toBeInstanceOf(SignerRefusedError);
    expect(err.code).toBe(ErrorCode.Refused);
    expect((err as SignerRefusedError).reason).toBe('policy_mismatch');
    expect(err.data).toMatchObject({ stage: 'signers', reason: 'policy_mismatch', signer: 's1' });
  });

  it("execute's HTTP 500 guard refusal keeps data.stage and data.reason", async () => {
    routes[`POST /intent/${ID}/execute`] = {
      status: 500,
      body: {
        error: {
          code: -32602,
          message: 'blocked by address_poisoning',
          data: { stage: 'protections', reason: 'address_poisoning' },
        },
      },
    };
    const err = await failure(client().execute(ID));
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.data).toEqual({ stage: 'protections', reason: 'address_poisoning' });
  });

  it('an unknown wire code is a TransportError with the status', async () => {
    routes['GET /assets'] = { status: 418, body: { error: { code: 7, message: 'teapot', data: null } } };
    const err = await failure(client().assets());
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).status).toBe(418);
  });

  it('a server message echoing the token is redacted', async () => {
    routes['GET /devices'] = {
      status: 401,
      body: { error: { code: 4100, message: `unknown token ${TOKEN}`, data: null } },
    };
    const err = await failure(client().devices());
    expect(err.message).toBe('unknown token [redacted]');
  });
});

describe('control-plane client: transport faults', () => {
  it('a non-JSON error reply is a TransportError with the status', async () => {
    routes['GET /wallets'] = { status: 502, body: '<html>bad gateway</html>', contentType: 'text/html' };
    const err = await failure(client().wallets());
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).status).toBe(502);
    expect(err.message).toContain('not JSON');
  });

  it('a non-JSON success reply is a TransportError with the status', async () => {
    routes['GET /health'] = { status: 200, body: 'OK', contentType: 'text/plain' };
    const err = await failure(client().health());
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).status).toBe(200);
  });

  it('invalid JSON under a JSON content type is a TransportError', async () => {
    routes['GET /health'] = { status: 200, body: '{"ok":', contentType: 'application/json' };
    const err = await failure(client().health());
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('not valid JSON');
  });

  it('an empty error body is a TransportError with the status', async () => {
    routes['GET /assets'] = { status: 500, body: '' };
    const err = await failure(client().assets());
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).status).toBe(500);
    expect(err.message).toContain('empty body');
  });

  it('a body that is not UTF-8 is a TransportError', async () => {
    routes['GET /health'] = { body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) };
    const err = await failure(client().health());
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('UTF-8');
  });

  it('an error status with an unexpected JSON shape is a TransportError with the status', async () => {
    routes['GET /assets'] = { status: 503, body: { message: 'maintenance' } };
    const err = await failure(client().assets());
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).status).toBe(503);
  });

  it('an oversized body (declared length) is refused', async () => {
    routes['GET /ledger/recent'] = { body: Array.from({ length: 200 }, (_, i) => ({ seq: i, hash: HEAD })) };
    const err = await failure(client({ maxResponseBytes: 1024 }).ledgerRecent());
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('larger than 1024 bytes');
  });

  it('an oversized body (streamed, no length) is refused while reading', async () => {
    routes['GET /ledger/recent'] = { stream: 64 * 1024 };
    const err = await failure(client({ maxResponseBytes: 4096 }).ledgerRecent());
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).status).toBe(200);
    expect(err.message).toContain('larger than 4096 bytes');
    // the same stream under the limit is read whole
    routes['GET /ledger/recent'] = { stream: 8 * 1024 };
    expect(await client().ledgerRecent()).toEqual([]);
  });

  it('a reply that never comes is a TransportError after the timeout', async () => {
    const c = createControlPlaneClient({ baseUrl: `${baseUrl}`, token: TOKEN, timeoutMs: 100 });
    routes['GET /wallets'] = { hang: true };
    const started = Date.now();
    const err = await failure(c.wallets());
    expect(Date.now() - started).toBeLessThan(5000);
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('within 100 ms');
    expect(err.cause).toBeDefined();
  });

  it('a refused connection is a TransportError with the cause', async () => {
    const spare = createServer();
    await new Promise<void>((resolve) => spare.listen(0, '127.0.0.1', resolve));
    const port = (spare.address() as AddressInfo).port;
    await new Promise<void>((resolve) => spare.close(() => resolve()));
    const c = createControlPlaneClient({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN });
    const err = await failure(c.wallets());
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).status).toBeUndefined();
    expect(err.message).toContain('ECONNREFUSED');
    expect(err.cause).toBeDefined();
  });

  it('a malformed success body is a TransportError naming the field', async () => {
    routes[`GET /intent/${ID}`] = {
      body: { intentId: 'int_xyz', status: 'allowed', decision: DECISION, intent: INTENT_REQUEST, created_at: 1, approvals: [], execution: null },
    };
    const err = await failure(client().intent(ID));
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('intentId');
    expect(err.data?.['path']).toBe('intentId');
    expect((err as TransportError).status).toBe(200);
  });

  it('a malformed nested field is named by its path', async () => {
    routes[`POST /intent/${ID}/execute`] = { body: { ...OUTCOME, signers: [{ signer: 's1', address: 'r', ok: 'yes', detail: '' }] } };
    const err = await failure(client().execute(ID));
    expect(err).toBeInstanceOf(TransportError);
    expect(err.data?.['path']).toBe('signers.0.ok');
  });

  it('a redirect is not followed', async () => {
    routes['GET /assets'] = { status: 302, body: '', headers: { location: `${baseUrl}/elsewhere` } };
    const err = await failure(client().assets());
    expect(err).toBeInstanceOf(TransportError);
    expect(requests.map((r) => r.url)).toEqual(['/assets']);
  });

  it('an injected fetch is used', async () => {
    const seen: string[] = [];
    const c = createControlPlaneClient({
      baseUrl,
      fetch: async (url, init) => {
        seen.push(`${init.method} ${url}`);
        return fetch(url, init);
      },
    });
    await c.health();
    expect(seen).toEqual([`GET ${baseUrl}/health`]);
  });
});

describe('control-plane client: input checks (no request made)', () => {
  it('createIntent validates the request and names the field', async () => {
    const err = await failure(client().createIntent({ ...INTENT_REQUEST, amount: '1.5' }));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).path).toBe('amount');
    expect(requests).toHaveLength(0);
  });

  it('approveSigned validates the approval', async () => {
    const bad = { ...APPROVAL, signature: { curve: 'ed25519' as const, sig: 'zz' } };
    const err = await failure(client().approveSigned(ID, bad));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).path).toBe('signature.sig');
    expect(requests).toHaveLength(0);
  });

  it('cancel validates the statement and names the field', async () => {
    const err = await failure(client().cancel(ID, { by: 'Device:dana' }));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).path).toBe('by');
    expect(requests).toHaveLength(0);
  });

  it('empty path parameters and bad limits are refused', async () => {
    const c = client();
    await expect(c.intent('')).rejects.toBeInstanceOf(ValidationError);
    await expect(c.ledgerRecent(0)).rejects.toBeInstanceOf(ValidationError);
    await expect(c.ledgerRecent(1.5)).rejects.toBeInstanceOf(ValidationError);
    await expect(c.pairCreate({ role: 'admin' as 'viewer', label: 'x' })).rejects.toBeInstanceOf(ValidationError);
    expect(requests).toHaveLength(0);
  });

  it('bad options are refused', () => {
    expect(() => createControlPlaneClient({ baseUrl: 'ftp://x' })).toThrow(ValidationError);
    expect(() => createControlPlaneClient({ baseUrl: 'not a url' })).toThrow(ValidationError);
    expect(() => createControlPlaneClient({ baseUrl: 'http://u:p@127.0.0.1' })).toThrow(ValidationError);
    expect(() => createControlPlaneClient({ baseUrl: `${baseUrl}/?x=1` })).toThrow(ValidationError);
    expect(() => createControlPlaneClient({ baseUrl, timeoutMs: 0 })).toThrow(ValidationError);
    expect(() => createControlPlaneClient({ baseUrl, maxResponseBytes: -1 })).toThrow(ValidationError);
  });
});
