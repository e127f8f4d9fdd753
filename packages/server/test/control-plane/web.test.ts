/**
 * The approver app's files as the control plane serves them (web.ts): from the build's dist/web/app,
 * with a strict CSP and no inline script, and nothing but those files reachable under /app/.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { raw, setup, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

let h: Harness;
beforeAll(async () => {
  h = await setup();
});
afterAll(() => h.close());

describe('GET /app/', () => {
  it('serves the built app with a CSP that allows its own origin only, and no inline script', async () => {
    const res = await fetch(`${h.url}/app/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    // Every script is a file of the app (the CSP would refuse an inline one anyway).
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="[a-z0-9.]+"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/https?:\/\//);
    const js = await fetch(`${h.url}/app/main.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('content-security-policy')).toBe(csp);
  });

  it('redirects /app to /app/ so relative URLs resolve', async () => {
    const res = await fetch(`${h.url}/app`, { redirect: 'manual' });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/app/');
  });

  it('attack: a path climbs out of the app folder (state.json, the keystore) or names a file the build did not make', async () => {
    for (const path of ['/app/../state.json', '/app/%2e%2e/state.json', '/app/..%2fstate.json', '/app/%2e%2e%2f%2e%2e%2fpackage.json', '/app/main.ts', '/app/.env', '/app/tsconfig.json']) {
      const r = await raw(h, 'GET', path, { token: null });
      // `..` is resolved by the URL parser before routing (then a route that needs a session, or none).
      expect([401, 404], `${path}: ${r.status} ${r.text.slice(0, 80)}`).toContain(r.status);
      expect(r.text).not.toContain('passphrase');
      expect(r.text).not.toContain('"wallets"');
    }
  });
});

describe('GET /intent/{id}/protect: the destination as an approver needs it', () => {
  it('names a destination the state knows (a member of a wallet) and says when it is the first payment to it', async () => {
    const wallet = h.state.wallets[0]!;
    const member = wallet.control.kind === 'native_multisig' ? wallet.control.signers[0]! : wallet.control.owners[0]!;
    const toMember = await h.client.createIntent({ wallet: wallet.wallet, destination: member.address, amount: '5' });
    expect((await raw(h, 'GET', `/intent/${toMember.intentId}/protect`)).body.destination).toEqual({ address: member.address, label: `${member.label} (a signer of ${wallet.wallet})`, first_payment: true });
    const stranger = h.dest();
    const toStranger = await h.client.createIntent({ wallet: wallet.wallet, destination: stranger, amount: '5' });
    expect((await raw(h, 'GET', `/intent/${toStranger.intentId}/protect`)).body.destination).toEqual({ address: stranger, label: null, first_payment: true });
    // Paid once (confirmed), it is known: no first-payment warning for the next one.
    expect((await h.client.execute(toStranger.intentId)).status).toBe('confirmed');
    const again = await h.client.createIntent({ wallet: wallet.wallet, destination: stranger, amount: '6' });
    expect((await raw(h, 'GET', `/intent/${again.intentId}/protect`)).body.destination.first_payment).toBe(false);
  });
});
