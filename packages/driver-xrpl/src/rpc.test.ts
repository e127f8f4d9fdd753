import { TransportError } from '@vault/sdk';
import { describe, expect, it } from 'vitest';
import { rpcCall, rpcError, rpcErrorMessage } from './rpc.js';

const reply = (status: number, text: string) => (async () => ({ ok: status === 200, status, text: async () => text })) as never;

describe('rpcCall', () => {
  it('sends POST {method, params:[{api_version, ...}]} and returns result', async () => {
    let sent = '';
    const fetch = (async (_u: string, init: { body: string }) => {
      sent = init.body;
      return { ok: true, status: 200, text: async () => '{"result":{"status":"success","x":1}}' };
    }) as never;
    expect(await rpcCall({ url: 'http://x/', fetch }, 'fee', { a: 1 })).toEqual({ status: 'success', x: 1 });
    expect(JSON.parse(sent)).toEqual({ method: 'fee', params: [{ api_version: 2, a: 1 }] });
  });
  it('transport faults are TransportErrors; error results are values', async () => {
    await expect(rpcCall({ url: 'http://x/', fetch: reply(503, 'busy') }, 'fee')).rejects.toThrow(/HTTP 503/);
    await expect(rpcCall({ url: 'http://x/', fetch: reply(200, 'not json') }, 'fee')).rejects.toThrow(/not JSON/);
    await expect(rpcCall({ url: 'http://x/', fetch: reply(200, '{"nope":1}') }, 'fee')).rejects.toThrow(/no result/);
    const boom = (async () => {
      throw new Error('ECONNREFUSED');
    }) as never;
    await expect(rpcCall({ url: 'http://x/', fetch: boom }, 'fee')).rejects.toBeInstanceOf(TransportError);
    const r = await rpcCall({ url: 'http://x/', fetch: reply(200, '{"result":{"status":"error","error":"actNotFound","error_message":"Account not found."}}') }, 'account_info');
    expect(rpcError(r)).toBe('actNotFound');
    expect(rpcErrorMessage(r)).toBe('Account not found.');
    expect(rpcError({ status: 'success' })).toBeNull();
  });
});
