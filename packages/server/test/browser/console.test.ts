/**
 * Issue #24: the operator console in a real browser. Chromium (Debian's package, made present by
 * scripts/chromium.mjs) driven by playwright-core against a real vault on the XRPL devnet
 * (xrpl-vault.ts): unlock, create an intent (a refused one first: the 400's field is marked), an
 * approval signed by the device's key, execute from the console until the ledger confirms it, the
 * receipt chain verified, a device paired from the QR code on screen and revoked. The main flow
 * is keyboard only. Every screen is photographed at 1280x800 and 390x844 into
 * test-results/browser/, and no screen may scroll sideways.
 */
import { createControlPlaneClient, generateEd25519KeyPair, signApproval, signEd25519, fromHex, toHex } from '@vault/sdk';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SERVER_PKG } from '../cli-bundle.js';
import { startXrplVault, WALLET, type XrplVault } from './xrpl-vault.js';
import { ensureChromium } from '../../../../scripts/chromium.mjs';

// What page.evaluate's functions see, in the page (the server's tsconfig has no DOM library).
declare const document: any;
declare const location: any;
declare const sessionStorage: any;
declare const localStorage: any;

vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

const SHOTS = join(SERVER_PKG, 'test-results/browser');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** 60 XRP: above the policy's approval threshold, so the device must approve. */
const AMOUNT = '60000000';

let vault: XrplVault;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Uncaught page errors and console errors (a CSP violation is one): the test ends with none. */
const pageErrors: string[] = [];
let intentId = '';

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  vault = await startXrplVault((deviceId) => [
    { rule: 'allow_operations', ops: ['transfer'] },
    { rule: 'hard_ceiling', max: '1000000000' },
    { rule: 'approval_threshold', above: '50000000', required_weight: 1, approvers: [{ id: deviceId, weight: 1 }] },
  ]);
  // No browser is no reason to skip: ensureChromium installs Debian's chromium or throws saying how.
  browser = await chromium.launch({ executablePath: ensureChromium(), headless: true, args: ['--no-sandbox'] });
  context = await browser.newContext({ viewport: DESKTOP });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // API refusals the test provokes (400, 401, the refused execute) are logged by Chromium as failed
    // loads; a 404 would be a missing file of the console itself, and anything else a script or CSP error.
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of (400|401|403|500)/.test(m.text())) pageErrors.push(`console: ${m.text()}`);
  });
});

afterAll(async () => {
  await browser?.close();
  await vault?.close();
});

/** The element that has the focus: its tag, accessible text and id. */
async function focused(): Promise<{ tag: string; text: string; id: string; label: string }> {
  return page.evaluate(() => {
    const el = document.activeElement;
    return { tag: el?.tagName.toLowerCase() ?? '', text: (el?.textContent ?? '').trim(), id: el?.id ?? '', label: el?.getAttribute('aria-label') ?? '' };
  });
}

/** Presses Tab until the focused element matches (at most `max` presses): proves it is reachable by keyboard. */
async function tabTo(match: (f: Awaited<ReturnType<typeof focused>>) => boolean, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (match(await focused())) return;
  }
  throw new Error(`not reached with Tab in ${max} presses; focus is on ${JSON.stringify(await focused())}`);
}

/** Waits for a screen to finish rendering (its h1 is in place and has the focus). */
async function screenReady(heading: RegExp): Promise<void> {
  await page.waitForFunction(() => !document.getElementById('screen')?.hasAttribute('aria-busy') && document.activeElement?.tagName === 'H1');
  expect(await page.locator('#screen h1').textContent()).toMatch(heading);
}

/** Shoots the page at both sizes and checks nothing overflows sideways at either. */
async function photograph(name: string): Promise<void> {
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    await page.waitForTimeout(50);
    const overflow = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
    expect(overflow.scroll, `${name} at ${size.width}x${size.height} scrolls sideways`).toBeLessThanOrEqual(overflow.client);
    await page.screenshot({ path: join(SHOTS, `${name}-${size.width}x${size.height}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

async function go(hash: string, heading: RegExp): Promise<void> {
  await page.evaluate((h) => (location.hash = h), hash);
  await screenReady(heading);
}

describe('the operator console in Chromium, on the XRPL devnet', () => {
  it('is served with the strict CSP; a wrong passphrase is refused; unlocks with the keyboard', async () => {
    const res = await page.goto(`${vault.url}/app/console/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
    // The passphrase field has the focus from the start.
    expect((await focused()).id).toBe('passphrase');
    await photograph('unlock');
    await page.keyboard.type('not the passphrase');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#unlock-error').textContent()).toBe('Wrong passphrase.');
    expect(await page.locator('#nav').isHidden()).toBe(true);
    expect((await focused()).id).toBe('passphrase');
    await page.keyboard.press('Control+A');
    await page.keyboard.type(vault.passphrase);
    await page.keyboard.press('Enter');
    await screenReady(/^Intents$/);
    expect(await page.locator('#passphrase').inputValue()).toBe('');
    // Kept in memory only: nothing in either web storage.
    expect(await page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);
  });

  it('keyboard only: a new intent, refused for its amount (the field is named and focused), then created', async () => {
    await tabTo((f) => f.tag === 'a' && f.text === 'New intent');
    await page.keyboard.press('Enter');
    await screenReady(/^New intent$/);
    await tabTo((f) => f.id === 'f-wallet');
    await tabTo((f) => f.id === 'f-destination');
    await page.keyboard.type(vault.destination);
    await tabTo((f) => f.id === 'f-amount');
    await page.keyboard.type('60.5');
    await tabTo((f) => f.tag === 'button' && f.text === 'Create intent');
    await page.keyboard.press('Enter');
    // The 400 names intent.amount: the field is marked and has the focus, its message beside it.
    await expect.poll(async () => (await focused()).id).toBe('f-amount');
    expect(await page.locator('#f-amount').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#f-amount-error').textContent()).toMatch(/amount/);
    expect(await page.locator('#create-result [role=alert]').textContent()).toMatch(/field: amount/);
    await photograph('create-refused');
    await page.keyboard.press('Control+A');
    await page.keyboard.type(AMOUNT);
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await focused()).id).toBe('open-created');
    expect(await page.locator('#create-result').textContent()).toContain('status pending_approvals');
    expect(await page.locator('#f-amount').getAttribute('aria-invalid')).toBeNull();
    await page.keyboard.press('Enter');
    await screenReady(/^Intent int_/);
    intentId = decodeURIComponent(new URL(page.url()).hash.replace(/^#intent\//, ''));
    expect(intentId).toMatch(/^int_[0-9a-f]{64}$/);
    expect(await page.locator('dl').textContent()).toContain('pending_approvals');
  });

  it('keyboard only: approved by the device, executed from the console, confirmed stage by stage', async () => {
    // The device approves on its own key (what the approver app does), relayed by an operator session.
    const cp = createControlPlaneClient({ baseUrl: vault.url });
    await cp.unlock(vault.passphrase);
    const approval = signApproval({ approver_id: vault.device.id, intent: intentId, verdict: 'approve', at: Math.floor(Date.now() / 1000), strong_auth: false }, vault.device.secretKey);
    // The policy's one required approval is in: the intent is allowed.
    expect((await cp.approveSigned(intentId, approval)).status).toBe('allowed');

    await tabTo((f) => f.tag === 'a' && f.text === 'Refresh');
    await page.keyboard.press('Enter');
    await screenReady(/^Intent int_/);
    expect(await page.locator('dl').textContent()).toMatch(/Statusallowed/);
    expect(await page.locator('table', { hasText: 'Approvals' }).textContent()).toContain(vault.device.id);
    await tabTo((f) => f.tag === 'button' && f.text === 'Execute');
    await page.keyboard.press('Enter');
    // The outcome's heading takes the focus when the answer is in.
    await expect.poll(async () => (await focused()).text, { timeout: 60_000 }).toMatch(/^Execute: /);
    expect((await focused()).text).toBe('Execute: confirmed');
    const stages = await page.locator('ol.stages li').allTextContents();
    expect(stages).toEqual(['policy: done', 'params: done', 'protections: done', 'prepare: done', 'signers: done', 'assemble: done', 'submit: done', 'confirm: done', 'receipts: done']);
    const signed = await page.locator('.outcome td[data-label="Signed"]').allTextContents();
    expect(signed.filter((x) => x === 'yes').length).toBeGreaterThanOrEqual(2);
    // Status and receipts were read again after the execution.
    expect(await page.locator('#intent-status').textContent()).toBe('confirmed');
    expect(await page.locator('#execute').count()).toBe(0);
    expect(await page.locator('table', { hasText: 'Receipts of this intent' }).locator('td[data-label="Kind"]').allTextContents()).toContain('intent.confirmed');
    await photograph('execute-confirmed');
    // The ledger agrees: the destination was paid from the wallet.
    expect((await cp.intent(intentId)).status).toBe('confirmed');
  });

  it('an execute the policy refuses shows the stage it stopped at, and nothing after it ran', async () => {
    const cp = createControlPlaneClient({ baseUrl: vault.url });
    await cp.unlock(vault.passphrase);
    const pending = await cp.createIntent({ wallet: WALLET, destination: vault.destination, amount: '70000000' });
    expect(pending.status).toBe('pending_approvals');
    await go(`#intent/${pending.intentId}`, /^Intent int_/);
    await page.getByRole('button', { name: 'Execute' }).click();
    await expect.poll(async () => (await focused()).text, { timeout: 60_000 }).toBe('Execute: refused');
    expect(await page.locator('.outcome [role=alert]').textContent()).toMatch(/pending_approvals|approval/);
    const stages = await page.locator('ol.stages li').allTextContents();
    expect(stages[0]).toBe('policy: refused');
    expect(stages.slice(1).every((x) => x.endsWith(': not reached'))).toBe(true);
    await photograph('execute-refused');
    expect((await cp.intent(pending.intentId)).status).toBe('pending_approvals');
  });

  it("the intent's detail lists its receipts; the list filters by wallet and status", async () => {
    await go(`#intent/${intentId}`, /^Intent int_/);
    const receipts = page.locator('table', { hasText: 'Receipts of this intent' });
    const kinds = await receipts.locator('tbody td[data-label="Kind"]').allTextContents();
    expect(kinds.length).toBeGreaterThanOrEqual(3);
    expect(kinds[0]).toMatch(/created/);
    await photograph('intent');

    await go('#intents', /^Intents$/);
    await page.selectOption('#wallet', WALLET);
    await page.selectOption('#status', 'confirmed');
    // (the refused one above is pending_approvals: the filter leaves it out)
    await page.getByRole('button', { name: 'Filter' }).click();
    await screenReady(/^Intents$/);
    expect(page.url()).toContain('status=confirmed');
    const rows = page.locator('table tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('confirmed');
    await photograph('intents');
    await go('#intents?status=denied', /^Intents$/);
    expect(await page.locator('#screen').textContent()).toContain('No intent matches.');
  });

  it('verifies the receipt chain', async () => {
    await tabTo((f) => f.tag === 'a' && f.text === 'Receipt chain');
    await page.keyboard.press('Enter');
    await screenReady(/^Receipt chain$/);
    expect(await page.locator('#verify-result').textContent()).toMatch(/^Verified: /);
    await photograph('verify');
  });

  it('shows the estate, a clean reconcile and the recovery tier, read from the ledger', async () => {
    await go('#estate', /^Estate$/);
    expect(await page.locator('table caption').first().textContent()).toBe(`${WALLET} on xrpl:local`);
    expect(await page.locator('td[data-label="Symbol"]').first().textContent()).toBe('XRP');
    await photograph('estate');

    await go('#reconcile', /^Reconcile$/);
    await page.getByRole('button', { name: 'Reconcile' }).click();
    await expect.poll(() => page.locator('#reconcile-result h2').textContent()).toBe(`${WALLET}: clean`);
    await screenReady(/^Reconcile$/);
    await photograph('reconcile');

    await go('#recovery', /^Recovery status$/);
    expect(await page.locator('td[data-label="Tier"]').first().textContent()).toBe('resilient');
    expect(await page.locator('td[data-label="Survives losing any one key"]').first().textContent()).toBe('yes');
    await photograph('recovery');
  });

  it('keyboard only: pairs a device from the QR code on screen, then revokes it', async () => {
    await go('#devices', /^Devices$/);
    await tabTo((f) => f.id === 'p-role');
    await page.keyboard.press('ArrowDown'); // approver -> initiator
    await tabTo((f) => f.id === 'p-label');
    await page.keyboard.type('kiosk tablet');
    // What the QR code carries ({url, code, challenge}): the answer the console drew it from.
    const answer = page.waitForResponse((r) => r.url().endsWith('/pair/create'));
    await page.keyboard.press('Enter');
    const pairing = (await (await answer).json()) as { code: string; challenge: string; role: string };
    expect(pairing.role).toBe('initiator');
    await expect.poll(async () => (await focused()).text).toMatch(/^Pairing code /);
    const code = (await focused()).text.replace('Pairing code ', '');
    expect(code).toBe(pairing.code);
    const qr = page.locator('img.qr');
    await expect.poll(() => qr.evaluate((img: any) => img.complete && img.naturalWidth)).toBeGreaterThanOrEqual(256);
    expect(await qr.getAttribute('alt')).toContain(code);
    await photograph('devices-pairing');

    // The device scans the code and claims it with its own key (what the approver app does).
    const cp = createControlPlaneClient({ baseUrl: vault.url });
    await cp.unlock(vault.passphrase);
    const key = generateEd25519KeyPair();
    const claim = (await cp.pairClaim({ code, public_key: key.publicKeyHex, signature: toHex(signEd25519(fromHex(pairing.challenge, 'challenge', 32), key.secretKey)), label: 'kiosk tablet' })) as { device: { id: string } };
    const id = claim.device.id;

    // Choosing the screen the console is on again reads it again (the claim happened elsewhere).
    await page.getByRole('link', { name: 'Devices' }).click();
    await screenReady(/^Devices$/);
    await page.locator('#screen h1').focus();
    await tabTo((f) => f.label === 'Revoke kiosk tablet');
    await page.keyboard.press('Enter');
    expect((await focused()).label).toBe('Confirm revoking kiosk tablet');
    // Cancel puts the Revoke button back, focused; then revoke for real.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect((await focused()).label).toBe('Revoke kiosk tablet');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await screenReady(/^Devices$/);
    const row = page.locator('tr', { hasText: id });
    expect(await row.locator('td[data-label="State"]').textContent()).toMatch(/^revoked /);
    expect(await row.getByRole('button').count()).toBe(0);
    const listed = ((await cp.devices()) as { devices: { id: string; revoked: boolean }[] }).devices.find((d) => d.id === id);
    expect(listed?.revoked).toBe(true);
    await photograph('devices');
  });

  it('locks: the token is forgotten and the API refuses it', async () => {
    // The token the page sends (read off a request: the page keeps it nowhere a script outside could).
    const sent = page.waitForRequest((r) => r.url().endsWith('/devices'));
    await go(`#devices?${Date.now()}`, /^Devices$/);
    const token = /^Bearer (.+)$/.exec((await sent).headers()['authorization'] ?? '')?.[1];
    expect(token).toBeDefined();
    expect((await fetch(`${vault.url}/devices`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    await tabTo((f) => f.id === 'lock');
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await focused()).id).toBe('passphrase');
    expect(await page.locator('#unlock-error').textContent()).toBe('Locked.');
    expect(await page.locator('#screen').isHidden()).toBe(true);
    expect((await fetch(`${vault.url}/devices`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    // Back to a screen by its address: the unlock form stays, nothing is fetched without a session.
    await page.evaluate(() => (location.hash = '#estate'));
    expect((await focused()).id).toBe('passphrase');
    expect(await page.locator('#screen').isHidden()).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});

