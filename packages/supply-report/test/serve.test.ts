/** The report server in-process: routes, the /namespaces listing, loopback only, HEAD. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespacesListing, serveReport, type RunningServer, type SupplyReport } from '../src/index.js';

const doc: SupplyReport = {
  derivedAt: '2026-11-22T00:00:00Z',
  rule: 'rule',
  chains: {
    xrpl: { endpoint: 'https://x', issuers: [{ account: 'rA', domain: null, obligations: {}, query: '{}' }] },
    stellar: { endpoint: 'https://s', issuers: [{ issuer: '(2 locked issuers, 1 unit each)', locked: true, assets: { NFT: '(2 issuers)' }, members: ['GA', 'GB'], query: 'GET /assets?asset_code=NFT&limit=200' }] },
    solana: { endpoint: 'https://sol', mints: [] },
    polygon: { endpoint: 'https://p', owner: `0x${'1'.repeat(40)}`, contracts: [{ address: `0x${'2'.repeat(40)}`, label: 'T' }], query: 'q', note: 'n' },
  },
};
let s: RunningServer;
beforeAll(async () => {
  s = await serveReport(JSON.stringify(doc));
});
afterAll(() => s.close());

describe('serve', () => {
  it('binds 127.0.0.1 and lists namespaces with links to the rows (group members included)', async () => {
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const ns = (await (await fetch(`${s.url}/namespaces`)).json()) as ReturnType<typeof namespacesListing>;
    expect(ns).toEqual(namespacesListing(doc));
    expect(ns.namespaces.stellar.entries[0]).toEqual({ id: '(2 locked issuers, 1 unit each)', members: ['GA', 'GB'], row: '/supply-report.json#/chains/stellar/issuers/0', href: '/rows/stellar/0' });
    expect(ns.namespaces.polygon).toMatchObject({ endpoint: 'https://p', kind: 'contracts', entries: [{ id: `0x${'2'.repeat(40)}`, label: 'T' }] });
  });
  it('HEAD has headers and no body; unknown paths 404; /rows rejects non-numeric indexes', async () => {
    const head = await fetch(`${s.url}/supply-report.json`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await fetch(`${s.url}/rows/xrpl/00`)).status).toBe(404);
    expect((await fetch(`${s.url}/rows/evm/0`)).status).toBe(404);
    expect((await fetch(`${s.url}/../etc/passwd`)).status).toBe(404);
    expect(await (await fetch(`${s.url}/health`)).json()).toEqual({ ok: true, derivedAt: doc.derivedAt });
  });
  it('refuses to bind anything but loopback, and refuses an invalid document', async () => {
    await expect(serveReport(JSON.stringify(doc), { host: '0.0.0.0' })).rejects.toMatchObject({ code: 'unsafe_endpoint' });
    await expect(serveReport('{', {})).rejects.toMatchObject({ code: 'bad_report' });
    await expect(serveReport(JSON.stringify({ ...doc, rule: '' }), {})).rejects.toThrow('not a supply report: rule');
  });
});
