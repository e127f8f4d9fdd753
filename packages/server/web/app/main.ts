/**
 * @module web/app/main
 * The approver app: pair this browser as an approver device (QR through the camera, or the code
 * pasted), then a live list of the intents waiting for it, each shown as a person needs it to
 * decide, and approve or reject, signed here with the device key (and a passkey when one was
 * registered). Every element is built with the DOM API: no text from the server is parsed as HTML.
 */
import { approvalMessage, formatUnits, type ApprovalStatement } from '@vault/sdk';
import { ApiError, claim, fromHex, generateDeviceKey, loadDevice, saveDevice, Session, signBytes, type StoredDevice } from './device.js';
import { assertIntentIs } from './intent-id.js';
import { parsePairing } from './pairing.js';
import { assertPasskey, passkeysAvailable, registerPasskey } from './passkey.js';
import { scanQr } from './scan.js';

type Child = Node | string | null | undefined | false;
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean | ((e: Event) => void)> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else if (v !== false) el.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

const main = document.getElementById('main') as HTMLElement;
const notice = document.getElementById('notice') as HTMLElement;
const who = document.getElementById('who') as HTMLElement;
const say = (text: string) => (notice.textContent = text);
const now = () => Math.floor(Date.now() / 1000);

/** Replaces the screen; focus goes to its heading, so keyboard and screen-reader users start there. */
function show(title: string, ...body: Child[]): void {
  const heading = h('h1', { tabindex: '-1' }, title);
  main.replaceChildren(heading, ...body.filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
  main.dataset['screen'] = title;
  heading.focus();
}

// ------------------------------------------------------------------ pairing

async function pairScreen(): Promise<void> {
  const usePasskey = h('input', { type: 'checkbox', id: 'use-passkey' });
  usePasskey.checked = await passkeysAvailable();
  const label = h('input', { type: 'text', id: 'label', value: 'my approver', maxlength: '128', autocomplete: 'off' });
  const pasted = h('textarea', { id: 'code', spellcheck: 'false', autocomplete: 'off', placeholder: 'the code npm start printed' });
  // Opened from the pairing link: the code is in the fragment (never sent to the server); it is
  // moved into the form and out of the address bar, and pairing waits for the person to confirm.
  const fromLink = /^#pair=([A-Za-z0-9_.-]+)$/.exec(location.hash);
  if (fromLink) {
    pasted.value = fromLink[1]!;
    history.replaceState(null, '', location.pathname);
  }
  const video = h('video', { hidden: true, 'aria-label': 'camera' });
  let scanning: AbortController | null = null;

  const pair = async (text: string, button: HTMLButtonElement) => {
    button.disabled = true;
    say('');
    try {
      const { code, challenge } = parsePairing(text);
      const { keys, publicKeyHex } = await generateDeviceKey();
      const challengeBytes = fromHex(challenge);
      const signature = await signBytes(keys, challengeBytes);
      const name = label.value.trim() || 'my approver';
      const passkey = usePasskey.checked ? await registerPasskey(challengeBytes, name) : null;
      const answer = await claim({
        code,
        public_key: publicKeyHex,
        signature,
        label: name,
        ...(passkey ? { passkey: { attestation_object: passkey.attestation_object, client_data_json: passkey.client_data_json } } : {}),
      });
      const device: StoredDevice = { device_id: answer.device.id, role: answer.device.role, label: answer.device.label, public_key: publicKeyHex, keys, passkey: passkey ? { credential_id: passkey.credential_id } : null, paired_at: now() };
      await saveDevice(device);
      pairedScreen(device, answer.counted_by.length, answer.note);
    } catch (e) {
      say(`Pairing failed: ${e instanceof Error ? e.message : String(e)}`);
      button.disabled = false;
    }
  };

  const scanButton: HTMLButtonElement = h('button', {
    type: 'button',
    class: 'primary',
    id: 'scan',
    onclick: async () => {
      scanning?.abort();
      scanning = new AbortController();
      video.hidden = false;
      say('');
      try {
        const text = await scanQr(video, scanning.signal);
        video.hidden = true;
        await pair(text, scanButton);
      } catch (e) {
        video.hidden = true;
        if (!(e instanceof DOMException && e.name === 'AbortError')) say(`The camera could not read a code: ${e instanceof Error ? e.message : String(e)}`);
      }
    },
  }, 'Scan the QR code');
  const pasteButton: HTMLButtonElement = h('button', { type: 'button', id: 'pair-pasted', onclick: () => void pair(pasted.value, pasteButton) }, 'Pair with this code');

  show(
    'Pair this device',
    h('p', {}, 'This browser becomes an approver of your vault: its signing key is made here and never leaves it.'),
    h('label', { for: 'label' }, 'Name of this device'),
    label,
    h('label', { class: 'check', for: 'use-passkey' }, usePasskey, 'Confirm each approval with a passkey (fingerprint, face or PIN)'),
    h('div', { class: 'actions' }, scanButton),
    video,
    h('label', { for: 'code' }, 'Or paste the pairing code'),
    pasted,
    h('div', { class: 'actions' }, pasteButton),
  );
}

function pairedScreen(device: StoredDevice, counted: number, note?: string): void {
  show(
    'Paired',
    h('p', { class: 'ok' }, `This browser is approver ${device.device_id} (${device.label}).`),
    device.passkey ? h('p', {}, 'Each approval asks for your passkey.') : h('p', { class: 'muted' }, 'No passkey: approvals are signed with the device key alone.'),
    counted === 0 && note ? h('p', { class: 'warn' }, note) : null,
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', id: 'to-queue', onclick: () => void start(device) }, 'See what is waiting')),
  );
}

// ------------------------------------------------------------------ the queue

interface Intent {
  intentId: string;
  status: string;
  created_at: number;
  expires_at?: number;
  decision: { decision: string; reasons: string[]; required_weight: number; current_weight: number; not_before: number };
  intent: { wallet: string; destination: string; amount: string; asset_symbol?: string; asset_decimals: number; memo?: string; initiator: string; operation: { op: string } };
  approvals: { approver_id: string; verdict: string; at: number }[];
}
interface Policy {
  rules: { rule: string; above?: string; required_weight?: number; approvers?: { id: string; weight: number }[] }[];
}
interface Protect {
  blocked: boolean;
  findings: { guard: string; severity: string; detail: string }[];
  destination?: { address: string; label: string | null; first_payment: boolean };
}

/** The ledger's own unit when the intent names no asset. */
const NATIVE: Record<string, string> = { xrpl: 'XRP', stellar: 'XLM', eip155: 'ETH' };
let chains: Record<string, string> = {};

function amountText(i: Intent['intent']): string {
  const symbol = i.asset_symbol ?? NATIVE[(chains[i.wallet] ?? '').split(':')[0] ?? ''] ?? '';
  return `${formatUnits(i.amount, i.asset_decimals)} ${symbol}`.trim();
}

function timeLeft(until: number | undefined): string {
  if (until === undefined) return 'no expiry';
  const s = until - now();
  if (s <= 0) return 'expired';
  const d = Math.floor(s / 86400);
  const hh = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d > 0 ? `${d} d ${hh} h left` : hh > 0 ? `${hh} h ${m} min left` : `${Math.max(1, m)} min left`;
}

let session: Session;
let stream: AbortController | null = null;
/** Re-renders the current screen when an event concerns it. */
let onChange: (intentId: string | undefined) => void = () => undefined;
/**
 * Each screen takes the next number as it starts. A screen still reading when a newer one started
 * shows nothing: an event's refresh of the intent must not cover the answer to the approval it
 * reports, whichever of the two reads comes back last.
 */
let screens = 0;

async function start(device: StoredDevice): Promise<void> {
  session = new Session(device);
  who.textContent = `${device.label} · ${device.device_id}`;
  try {
    await session.signIn();
    const wallets = await session.api<{ wallet: string; chain: string }[] | { wallets: { wallet: string; chain: string }[] }>('GET', '/wallets');
    chains = Object.fromEntries((Array.isArray(wallets) ? wallets : wallets.wallets).map((w) => [w.wallet, w.chain]));
  } catch (e) {
    show('Cannot sign in', h('p', {}, e instanceof Error ? e.message : String(e)), h('p', { class: 'muted' }, 'If this device was revoked, pair it again with a new code.'));
    return;
  }
  stream?.abort();
  stream = new AbortController();
  let pending: ReturnType<typeof setTimeout> | null = null;
  void session.follow((e) => {
    // Many events may come at once (a replay): one refresh for the lot.
    if (pending) clearTimeout(pending);
    pending = setTimeout(() => onChange(e.subject['intent']), 150);
  }, stream.signal);
  await queueScreen();
}

async function queueScreen(): Promise<void> {
  const mine = ++screens;
  const { intents } = await session.api<{ intents: Intent[] }>('GET', '/device/intents');
  if (mine !== screens) return;
  onChange = () => void queueScreen().catch((e) => say(String(e)));
  if (intents.length === 0) {
    show('Nothing waiting for you', h('p', { class: 'muted' }, 'Intents that need your approval appear here as soon as they are created.'));
    return;
  }
  show(
    `${intents.length} waiting for you`,
    h(
      'ul',
      { class: 'plain', id: 'queue' },
      ...intents.map((r) =>
        h(
          'li',
          { class: 'card' },
          h('h2', {}, `${r.intent.operation.op} ${amountText(r.intent)}`),
          h('p', { class: 'muted' }, `from ${r.intent.wallet} · ${timeLeft(r.expires_at)}`),
          h('button', { type: 'button', class: 'primary', 'data-intent': r.intentId, onclick: () => void intentScreen(r.intentId).catch((e) => say(String(e))) }, `Review ${amountText(r.intent)}`),
        ),
      ),
    ),
  );
}

async function intentScreen(id: string): Promise<void> {
  const mine = ++screens;
  const [r, protect] = await Promise.all([session.api<Intent>('GET', `/intent/${id}`), session.api<Protect>('GET', `/intent/${id}/protect`).catch(() => null)]);
  // Only the content the id commits to is shown, so only what the person saw is signed.
  try {
    await assertIntentIs(id, r.intent);
  } catch (e) {
    if (mine !== screens) return;
    onChange = () => undefined;
    show('Not shown', h('p', { class: 'bad', id: 'mismatch' }, e instanceof Error ? e.message : String(e)), h('div', { class: 'actions' }, h('button', { type: 'button', id: 'back', onclick: () => void queueScreen().catch((err) => say(String(err))) }, 'Back to the list')));
    return;
  }
  const policy = await session.api<Policy>('GET', `/policy/${encodeURIComponent(r.intent.wallet)}`);
  if (mine !== screens) return;
  onChange = (changed) => {
    if (changed === undefined || changed === id) void intentScreen(id).catch((e) => say(String(e)));
  };
  const me = session.device.device_id;
  const approvedBy = new Set(r.approvals.filter((a) => a.verdict === 'approve').map((a) => a.approver_id));
  const named = new Map<string, number>();
  for (const rule of policy.rules) if (rule.rule === 'approval_threshold') for (const a of rule.approvers ?? []) named.set(a.id, a.weight);
  const stillNeeded = [...named.keys()].filter((a) => !approvedBy.has(a));
  const dest = protect?.destination;
  const open = r.status === 'pending_approvals' && !r.approvals.some((a) => a.approver_id === me);
  const name = (a: string) => (a === me ? `${a} (you)` : a);

  const decide = async (verdict: 'approve' | 'reject', button: HTMLButtonElement) => {
    for (const b of main.querySelectorAll('button')) b.disabled = true;
    say('');
    try {
      const statement: ApprovalStatement = { approver_id: me, intent: id, verdict, at: now(), strong_auth: session.device.passkey !== null };
      const sig = await signBytes(session.device.keys, approvalMessage(statement));
      const webauthn = session.device.passkey ? await assertPasskey(statement, session.device.passkey.credential_id) : null;
      const out = await session.api<{ status: string }>('POST', `/intent/${id}/approve-signed`, { ...statement, signature: { curve: 'ed25519', sig }, ...(webauthn ? { webauthn } : {}) });
      resultScreen(verdict, r, out.status);
    } catch (e) {
      say(`${verdict === 'approve' ? 'Approval' : 'Rejection'} not sent: ${e instanceof ApiError || e instanceof Error ? e.message : String(e)}`);
      for (const b of main.querySelectorAll('button')) b.disabled = false;
      button.focus();
    }
  };
  const approve: HTMLButtonElement = h('button', { type: 'button', class: 'primary', id: 'approve', onclick: () => void decide('approve', approve) }, 'Approve');
  const reject: HTMLButtonElement = h('button', { type: 'button', class: 'danger', id: 'reject', onclick: () => void decide('reject', reject) }, 'Reject');

  show(
    `${r.intent.operation.op === 'transfer' ? 'Send' : r.intent.operation.op} ${amountText(r.intent)}`,
    h('p', { class: 'amount' }, amountText(r.intent)),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Operation'),
      h('dd', {}, r.intent.operation.op),
      h('dt', {}, 'From'),
      h('dd', {}, `${r.intent.wallet} (${chains[r.intent.wallet] ?? 'unknown chain'})`),
      h('dt', {}, 'To'),
      h('dd', {}, dest?.label ? h('strong', {}, dest.label) : null, dest?.label ? h('br') : null, h('span', { class: 'mono' }, r.intent.destination)),
      r.intent.memo !== undefined && h('dt', {}, 'Memo'),
      r.intent.memo !== undefined && h('dd', {}, r.intent.memo),
      h('dt', {}, 'Asked by'),
      h('dd', {}, r.intent.initiator),
      h('dt', {}, 'Time left'),
      h('dd', {}, timeLeft(r.expires_at)),
    ),
    dest?.first_payment ? h('p', { class: 'warn', id: 'first-payment' }, 'First payment to this address: check it character by character with the person you are paying.') : null,
    h('h2', {}, 'Why it needs you'),
    h('ul', {}, ...r.decision.reasons.map((x) => h('li', {}, x))),
    h('h2', {}, 'Guard findings'),
    protect === null
      ? h('p', { class: 'muted' }, 'The guards could not be run (ledger unreachable).')
      : protect.findings.length === 0
        ? h('p', { class: 'muted' }, 'No finding.')
        : h('ul', {}, ...protect.findings.map((f) => h('li', { class: f.severity === 'block' ? 'bad' : '' }, `${f.guard}: ${f.detail}`))),
    h('h2', {}, 'Approvals'),
    h('p', {}, `Weight ${r.decision.current_weight} of ${r.decision.required_weight} needed.`),
    h('ul', {}, ...r.approvals.map((a) => h('li', {}, `${name(a.approver_id)}: ${a.verdict}`)), r.approvals.length === 0 ? h('li', { class: 'muted' }, 'none yet') : null),
    stillNeeded.length > 0 ? h('p', {}, `Still needed from any of: ${stillNeeded.map(name).join(', ')}`) : null,
    open ? h('div', { class: 'actions' }, approve, reject) : h('p', { class: 'muted' }, `Status: ${r.status}. Nothing to decide here.`),
    h('div', { class: 'actions' }, h('button', { type: 'button', id: 'back', onclick: () => void queueScreen().catch((e) => say(String(e))) }, 'Back to the list')),
  );
}

function resultScreen(verdict: 'approve' | 'reject', r: Intent, status: string): void {
  screens++;
  onChange = () => undefined;
  show(
    verdict === 'approve' ? 'Approved' : 'Rejected',
    h('p', { class: verdict === 'approve' ? 'ok' : 'bad' }, `You ${verdict === 'approve' ? 'approved' : 'rejected'} ${amountText(r.intent)} to ${r.intent.destination}.`),
    h('p', { id: 'result-status' }, `The intent is now ${status}.`),
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', id: 'back', onclick: () => void queueScreen().catch((e) => say(String(e))) }, 'Back to the list')),
  );
}

// ------------------------------------------------------------------ boot

async function boot(): Promise<void> {
  if (!crypto.subtle) {
    show('Open this app at http://localhost', h('p', {}, 'This browser only makes keys on a secure origin (https, or http://localhost).'));
    return;
  }
  const device = await loadDevice();
  if (device) await start(device);
  else await pairScreen();
}

void boot().catch((e) => say(`The app could not start: ${e instanceof Error ? e.message : String(e)}`));
