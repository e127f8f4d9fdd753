/**
 * The approver app in a real browser (issue #24), against the real launcher (`vault.mjs` as
 * `npm start` runs it): Chromium driven by playwright-core over CDP.
 *   - pairing from the printed code through the camera: Chromium's fake capture device plays a
 *     video of the printed pairing link's QR code, and the app reads it with jsQR;
 *   - the launcher makes the demo policies count the paired browser; an XRPL transfer above the
 *     approval threshold appears live in the app, is approved from the keyboard alone, signed in
 *     the browser with its non-extractable key, then executed and confirmed on the XRPL devnet;
 *   - a passkey registered at pairing and asserted at approval (DevTools' virtual WebAuthn
 *     authenticator): the request carries the wire shapes, verified here in Node;
 *   - every screen at desktop (1280x800) and phone (390x844) size without horizontal overflow,
 *     screenshots in test-results/screens/; the page requests nothing outside its own origin.
 * Chromium comes from scripts/chromium.mjs (installed with apt-get when missing, else a failure
 * naming the command): never skipped.
 */
import { approvalMessage, verifyEd25519 } from '@vault/sdk';
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, verify as nodeVerify } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../../../scripts/chromium.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const VAULT = join(HERE, '..', 'vault.mjs');
const SHOTS = join(HERE, '..', 'test-results', 'screens');
const require = createRequire(import.meta.url);
const QRCode = createRequire(require.resolve('@vault/server/package.json'))('qrcode');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** P-256's group order: a low-S signature has s <= N/2. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

let dir;
let child;
let browser;
let exited;
const out = { stdout: '', stderr: '' };
/** What the banner printed: the control plane, the operator passphrase, the app and the pairing link. */
const banner = {};

function until(pred, what, ms = 60_000) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      if (pred()) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() - started > ms) {
        clearInterval(timer);
        reject(new Error(`timed out waiting for ${what}\n${out.stdout.slice(-3000)}\n${out.stderr}`));
      }
    }, 50);
    exited.then(() => {
      clearInterval(timer);
      reject(new Error(`vault exited while waiting for ${what}: ${out.stderr}`));
    });
  });
}

/**
 * A Y4M video (what Chromium's fake capture device plays) showing `text` as a QR code, black on
 * white, 8 px per module with the quiet zone, centred in a 640x480 frame; two identical frames.
 */
function qrVideo(text, path) {
  const qr = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const size = qr.modules.size;
  const [W, H, SCALE, QUIET] = [640, 480, 8, 4];
  const side = (size + 2 * QUIET) * SCALE;
  if (side > H) throw new Error(`QR of ${size} modules does not fit the frame`);
  const [x0, y0] = [(W - side) / 2, (H - side) / 2];
  const y = Buffer.alloc(W * H, 235); // video white
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      if (!qr.modules.get(r, c)) continue;
      for (let dy = 0; dy < SCALE; dy++) y.fill(16, (y0 + (r + QUIET) * SCALE + dy) * W + x0 + (c + QUIET) * SCALE, (y0 + (r + QUIET) * SCALE + dy) * W + x0 + (c + QUIET + 1) * SCALE);
    }
  }
  const chroma = Buffer.alloc((W / 2) * (H / 2) * 2, 128);
  const frame = Buffer.concat([Buffer.from('FRAME\n'), y, chroma]);
  writeFileSync(path, Buffer.concat([Buffer.from(`YUV4MPEG2 W${W} H${H} F10:1 Ip A1:1 C420jpeg\n`), frame, frame]));
}

/** The operator's API on the control plane (127.0.0.1, as the banner prints it). */
async function operator() {
  const r = await fetch(`${banner.cpUrl}/session/unlock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ passphrase: banner.passphrase }) });
  const { token } = await r.json();
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return async (method, path, body) => {
    const res = await fetch(`${banner.cpUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: await res.json() };
  };
}

/** Screenshots of the current screen at desktop and phone size; neither may scroll sideways. */
async function capture(page, name) {
  for (const [label, size] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    await page.setViewportSize(size);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} at ${label} size overflows sideways by ${overflow}px`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

/** Presses Tab until `selector` has the focus (the keyboard path a person would take). */
async function tabTo(page, selector, max = 40) {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate((sel) => document.activeElement?.matches(sel) ?? false, selector)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${selector}`);
}

const heading = (page) => page.locator('main h1');

/** A page on the app in a fresh context (its own IndexedDB); records every URL it requests. */
async function newAppPage() {
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['camera'], { origin: new URL(banner.appUrl).origin });
  const page = await context.newPage();
  const requested = [];
  page.on('request', (r) => requested.push(r.url()));
  page.on('pageerror', (e) => out.stderr += `page error: ${e.message}\n`);
  return { context, page, requested };
}

const b64url = (buf) => Buffer.from(buf).toString('base64url');

/** r and s of a DER ECDSA signature. */
function derRS(der) {
  const b = Buffer.from(der);
  expect(b[0]).toBe(0x30);
  let i = 2;
  const int = () => {
    expect(b[i]).toBe(0x02);
    const len = b[i + 1];
    const v = BigInt(`0x${b.subarray(i + 2, i + 2 + len).toString('hex')}`);
    i += 2 + len;
    return v;
  };
  return { r: int(), s: int() };
}

beforeAll(async () => {
  const executablePath = ensureChromium();
  mkdirSync(SHOTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'vault-browser-test-'));
  child = spawn(process.execPath, [VAULT, '--port', '0', '--kdf-log2', '10', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d) => (out.stdout += d));
  child.stderr.on('data', (d) => (out.stderr += d));
  exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  await until(() => out.stdout.includes('Ctrl-C stops every process'), 'the vault to be up', 240_000);
  banner.cpUrl = /control plane\s+(http:\/\/\S+)/.exec(out.stdout)?.[1];
  banner.passphrase = /operator passphrase: ([^)\s]+)\)/.exec(out.stdout)?.[1];
  banner.link = /or open\s+(http:\/\/localhost:\d+\/app\/#pair=\S+)/.exec(out.stdout)?.[1];
  banner.appUrl = banner.link?.split('#')[0];
  banner.xrplDest = /destinations\s+funded accounts to send to: .*?xrpl (r\w+)/.exec(out.stdout)?.[1];
  expect(banner, out.stdout).toMatchObject({ cpUrl: expect.any(String), passphrase: expect.any(String), link: expect.any(String), xrplDest: expect.any(String) });
  // The printed code, as the camera will see it.
  const video = join(dir, 'pairing-qr.y4m');
  qrVideo(banner.link, video);
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  browser = await chromium.launch({
    executablePath,
    args: ['--use-fake-device-for-media-stream', `--use-file-for-fake-video-capture=${video}`, '--use-fake-ui-for-media-stream', ...(root ? ['--no-sandbox'] : [])],
  });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGINT');
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the approver app in Chromium', () => {
  it('pairs from the printed QR through the camera, approves a pending XRPL intent from the keyboard, and the intent confirms', async () => {
    const { context, page, requested } = await newAppPage();
    await page.goto(banner.appUrl);
    await expect.poll(() => heading(page).textContent()).toBe('Pair this device');
    // No authenticator in this context: no passkey offered, approvals signed by the device key alone.
    expect(await page.isChecked('#use-passkey')).toBe(false);
    await capture(page, '1-pair');
    await page.fill('#label', 'browser test approver');
    await page.click('#scan');
    await expect.poll(() => heading(page).textContent(), { timeout: 30_000 }).toBe('Paired');
    const deviceId = /approver (dev_[0-9a-f]{16})/.exec(await page.textContent('main'))?.[1];
    expect(deviceId).toBeDefined();
    await capture(page, '2-paired');

    // The key is in IndexedDB, and the browser will not export its private half.
    const key = await page.evaluate(async () => {
      const db = await new Promise((res, rej) => {
        const r = indexedDB.open('vault-approver');
        r.onsuccess = () => res(r.result);
        r.onerror = () => rej(r.error);
      });
      const d = await new Promise((res) => {
        const r = db.transaction('device').objectStore('device').get('self');
        r.onsuccess = () => res(r.result);
      });
      let exported = 'exported';
      try {
        await crypto.subtle.exportKey('pkcs8', d.keys.privateKey);
      } catch (e) {
        exported = e.name;
      }
      return { extractable: d.keys.privateKey.extractable, algorithm: d.keys.privateKey.algorithm.name, exported };
    });
    expect(key).toEqual({ extractable: false, algorithm: 'Ed25519', exported: 'InvalidAccessError' });

    // The launcher makes the demo policies count it.
    await until(() => out.stdout.includes(`your approver ${deviceId}`), 'the launcher to adopt the paired approver', 60_000);
    expect(out.stdout).toMatch(new RegExp(`your approver ${deviceId} \\("browser test approver"\\) is paired: ops-xrpl, ops-evm now count it`));
    const op = await operator();
    const policy = await op('GET', '/policy/ops-xrpl');
    expect(policy.body.rules.find((r) => r.rule === 'approval_threshold').approvers.map((a) => a.id)).toContain(deviceId);

    await page.click('#to-queue');
    await expect.poll(() => heading(page).textContent()).toBe('Nothing waiting for you');
    // Created now: the list learns it from the device event stream.
    const created = await op('POST', '/intent', { wallet: 'ops-xrpl', destination: banner.xrplDest, amount: '60000000', memo: 'browser approval' });
    expect(created.body.status).toBe('pending_approvals');
    await expect.poll(() => heading(page).textContent(), { timeout: 15_000 }).toBe('1 waiting for you');
    await capture(page, '3-queue');

    // Keyboard only from here.
    await tabTo(page, `button[data-intent="${created.body.intentId}"]`);
    await page.keyboard.press('Enter');
    await expect.poll(() => heading(page).textContent()).toBe('Send 60 XRP');
    const shown = await page.textContent('main');
    expect(shown).toContain('ops-xrpl (xrpl:local)');
    expect(shown).toContain(banner.xrplDest);
    expect(shown).toContain('browser approval');
    expect(shown).toMatch(/approval_threshold/);
    expect(shown).toContain('Weight 0 of 1 needed.');
    expect(shown).toContain(`${deviceId} (you)`);
    expect(shown).toMatch(/\d+ d \d+ h left|\d+ h \d+ min left/);
    expect(await page.isVisible('#first-payment')).toBe(true);
    await capture(page, '4-intent');
    await tabTo(page, '#approve');
    await page.keyboard.press('Enter');
    await expect.poll(() => heading(page).textContent(), { timeout: 15_000 }).toBe('Approved');
    expect(await page.textContent('#result-status')).toBe('The intent is now allowed.');
    await capture(page, '5-approved');

    const executed = await op('POST', `/intent/${created.body.intentId}/execute`);
    expect(executed.body.status, JSON.stringify(executed.body)).toBe('confirmed');
    const record = await op('GET', `/intent/${created.body.intentId}`);
    expect(record.body.approvals.map((a) => [a.approver_id, a.verdict, a.strong_auth])).toEqual([[deviceId, 'approve', false]]);

    // And a rejection, from the keyboard too: the intent is closed, nothing is sent.
    await tabTo(page, '#back');
    await page.keyboard.press('Enter');
    await expect.poll(() => heading(page).textContent()).toBe('Nothing waiting for you');
    const unwanted = await op('POST', '/intent', { wallet: 'ops-xrpl', destination: banner.xrplDest, amount: '55000000', memo: 'not this one' });
    await expect.poll(() => heading(page).textContent(), { timeout: 15_000 }).toBe('1 waiting for you');
    await tabTo(page, `button[data-intent="${unwanted.body.intentId}"]`);
    await page.keyboard.press('Enter');
    await expect.poll(() => heading(page).textContent()).toBe('Send 55 XRP');
    await tabTo(page, '#reject');
    await page.keyboard.press('Enter');
    await expect.poll(() => heading(page).textContent(), { timeout: 15_000 }).toBe('Rejected');
    await capture(page, '6-rejected');
    const rejected = await op('GET', `/intent/${unwanted.body.intentId}`);
    expect(rejected.body.approvals.map((a) => [a.approver_id, a.verdict])).toEqual([[deviceId, 'reject']]);
    expect(rejected.body).toMatchObject({ status: 'denied', rejectedBy: deviceId });
    expect(await page.textContent('#result-status')).toBe('The intent is now denied.');
    // An execute of it answers the denial and sends nothing.
    const refused = await op('POST', `/intent/${unwanted.body.intentId}/execute`);
    expect(refused.body.status).toBe('denied');
    expect(refused.body.txHash).toBeUndefined();

    // Everything the page loaded or called is the control plane's own origin.
    const origin = new URL(banner.appUrl).origin;
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((u) => !u.startsWith(`${origin}/`))).toEqual([]);
    await context.close();
  }, 240_000);

  it('attack: the printed code is used a second time (another browser): refused, nothing kept', async () => {
    const { context, page } = await newAppPage();
    await page.goto(banner.link);
    await expect.poll(() => heading(page).textContent()).toBe('Pair this device');
    await page.click('#pair-pasted');
    await expect.poll(() => page.textContent('#notice'), { timeout: 15_000 }).toBe('Pairing failed: pairing code invalid, used or expired');
    expect(await heading(page).textContent()).toBe('Pair this device');
    expect(await page.isEnabled('#pair-pasted')).toBe(true);
    // A code that is not one at all is refused in the page, before anything is sent.
    await page.fill('#code', 'not-a-code');
    await page.click('#pair-pasted');
    await expect.poll(() => page.textContent('#notice')).toBe('Pairing failed: the pairing code is <code>.<challenge>');
    const kept = await page.evaluate(
      () =>
        new Promise((res) => {
          const r = indexedDB.open('vault-approver');
          r.onsuccess = () => {
            const q = r.result.transaction('device').objectStore('device').count();
            q.onsuccess = () => res(q.result);
          };
        }),
    );
    expect(kept).toBe(0);
    await context.close();
  }, 60_000);

  it('a passkey registered at pairing signs each approval: the wire shapes, verified in Node', async () => {
    const op = await operator();
    const code = await op('POST', '/pair/create', { role: 'approver', label: 'passkey approver' });
    const { context, page } = await newAppPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    const sent = {};
    await page.route('**/pair/claim', async (route) => {
      sent.claim = route.request().postDataJSON();
      await route.continue();
    });
    // The answer to the approval is held back 1 s (see the refresh below).
    await page.route('**/approve-signed', async (route) => {
      sent.approval = route.request().postDataJSON();
      const response = await route.fetch();
      await new Promise((r) => setTimeout(r, 1000));
      await route.fulfill({ response });
    });
    // Opened from a pairing link: the code is in the form, the passkey offered (an authenticator is there).
    await page.goto(`${banner.appUrl}#pair=${code.body.code}.${code.body.challenge}`);
    await expect.poll(() => heading(page).textContent()).toBe('Pair this device');
    expect(await page.inputValue('#code')).toBe(`${code.body.code}.${code.body.challenge}`);
    expect(new URL(page.url()).hash).toBe('');
    expect(await page.isChecked('#use-passkey')).toBe(true);
    await page.click('#pair-pasted');
    await expect.poll(() => heading(page).textContent(), { timeout: 30_000 }).toBe('Paired');

    // The registration: ES256 over the pairing challenge, from this origin.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    const publicKey = createPublicKey(createPrivateKey({ key: Buffer.from(credentials[0].privateKey, 'base64'), format: 'der', type: 'pkcs8' }));
    expect(publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const created = JSON.parse(Buffer.from(sent.claim.passkey.client_data_json, 'base64url').toString('utf8'));
    expect(created).toMatchObject({ type: 'webauthn.create', challenge: b64url(Buffer.from(code.body.challenge, 'hex')), origin: new URL(banner.appUrl).origin });
    expect(Buffer.from(sent.claim.passkey.attestation_object, 'base64url').includes(Buffer.from(credentials[0].credentialId, 'base64'))).toBe(true);
    const deviceId = /approver (dev_[0-9a-f]{16})/.exec(await page.textContent('main'))?.[1];
    await until(() => out.stdout.includes(`your approver ${deviceId}`), 'the launcher to adopt the passkey approver', 60_000);

    const intent = await op('POST', '/intent', { wallet: 'ops-xrpl', destination: banner.xrplDest, amount: '70000000', memo: 'passkey approval' });
    await page.click('#to-queue');
    await page.click(`button[data-intent="${intent.body.intentId}"]`);
    await expect.poll(() => heading(page).textContent()).toBe('Send 70 XRP');
    // The race a loaded host makes: the approval's event reaches the app before the answer does, and
    // the refresh it starts reads the intent back after the answer is on screen (held 2 s here).
    let held = 0;
    await page.route(`**/intent/${intent.body.intentId}`, async (route) => {
      if (sent.approval !== undefined) {
        held++;
        await new Promise((r) => setTimeout(r, 2000));
      }
      await route.continue();
    });
    const refreshed = page.waitForResponse((r) => r.url().includes('/policy/') && held > 0, { timeout: 30_000 });
    await page.click('#approve');
    await expect.poll(() => sent.approval !== undefined, { timeout: 15_000 }).toBe(true);

    // The approval: ed25519 over the statement (strong_auth true), and the passkey's assertion bound to it.
    const a = sent.approval;
    const statement = { approver_id: a.approver_id, intent: a.intent, verdict: a.verdict, at: a.at, strong_auth: a.strong_auth };
    expect(statement).toMatchObject({ approver_id: deviceId, intent: intent.body.intentId, verdict: 'approve', strong_auth: true });
    expect(verifyEd25519(Buffer.from(a.signature.sig, 'hex'), approvalMessage(statement), Buffer.from(sent.claim.public_key, 'hex'))).toBe(true);
    const w = a.webauthn;
    expect(Object.keys(w).sort()).toEqual(['authenticator_data', 'client_data_json', 'credential_id', 'signature']);
    expect(Buffer.from(w.credential_id, 'base64url').equals(Buffer.from(credentials[0].credentialId, 'base64'))).toBe(true);
    const clientData = JSON.parse(Buffer.from(w.client_data_json, 'base64url').toString('utf8'));
    expect(clientData).toMatchObject({ type: 'webauthn.get', challenge: b64url(createHash('sha256').update(approvalMessage(statement)).digest()), origin: new URL(banner.appUrl).origin });
    const authData = Buffer.from(w.authenticator_data, 'base64url');
    expect(authData.subarray(0, 32).equals(createHash('sha256').update('localhost').digest())).toBe(true);
    expect(authData[32] & 0x05).toBe(0x05); // user present and verified
    const der = Buffer.from(w.signature, 'base64url');
    expect(derRS(der).s <= P256_N / 2n).toBe(true);
    const signed = Buffer.concat([authData, createHash('sha256').update(Buffer.from(w.client_data_json, 'base64url')).digest()]);
    expect(nodeVerify('sha256', signed, publicKey, der)).toBe(true);

    // The control plane verified the assertion (one SDK verifier at both services): recorded as strong.
    // The app's notice rides along, so a refusal says why in the failure message.
    await expect.poll(async () => `${await heading(page).textContent()} | notice: ${await page.textContent('#notice').catch(() => '')}`, { timeout: 30_000 }).toMatch(/^Approved \|/);
    // The late refresh has read everything it reads; it must not cover the answer.
    await refreshed;
    await page.waitForTimeout(200);
    expect(await heading(page).textContent()).toBe('Approved');
    const record = await op('GET', `/intent/${intent.body.intentId}`);
    expect(record.body.approvals.map((x) => [x.approver_id, x.strong_auth])).toEqual([[deviceId, true]]);
    await context.close();
  }, 240_000);
});
