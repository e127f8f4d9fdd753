/**
 * @module web/console
 * The operator console (issue #24), served by the control plane at /app/console/ and talking only
 * to its HTTP API on the same origin. Screens: intents (filter, detail with approvals and receipts,
 * execute with the stage-by-stage outcome), a new intent, estate, reconcile, recovery status,
 * devices (pair with a QR code, revoke) and the receipt chain's verification.
 *
 * The session token lives in this module's memory only: not in localStorage or sessionStorage,
 * where any script of the origin (or anyone with the profile on disk) could read it after the tab
 * is gone. The price is that a reload locks the console; the passphrase unlocks it again.
 *
 * Every value from the server reaches the page through textContent or an attribute, never as HTML.
 * Tables carry data-label on each cell so the stylesheet can stack them at phone width.
 */

type Json = Record<string, unknown>;

/** A non-2xx answer: the wire error's code, message and (for a 400) the field it names. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly field: string | null,
    readonly data: Json | null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let token: string | null = null;

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const str = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v));
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** Unix seconds as an ISO date-time (UTC), the way the receipts record them. */
const when = (s: unknown): string => (typeof s === 'number' ? new Date(s * 1000).toISOString().replace('.000Z', 'Z') : '');
const short = (id: string): string => (id.length > 20 ? `${id.slice(0, 12)}…${id.slice(-6)}` : id);

async function api<T = Json>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, cache: 'no-store', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  if (!res.ok) {
    const e = obj(obj(json)['error']);
    const data = Object.keys(obj(e['data'])).length > 0 ? obj(e['data']) : null;
    const field = typeof data?.['path'] === 'string' ? data['path'] : null;
    // An expired or locked session: back to the unlock screen, saying why.
    if (res.status === 401 && token !== null) lockedOut('The session ended; unlock again.');
    throw new ApiError(res.status, typeof e['code'] === 'number' ? e['code'] : 0, typeof e['message'] === 'string' ? e['message'] : `HTTP ${res.status}`, field, data);
  }
  return json as T;
}

// ------------------------------------------------------------------ DOM helpers

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | boolean | undefined | ((ev: Event) => void)>;

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else if (typeof v === 'string') el.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

/** A table with a caption; each cell is labelled with its column for the stacked phone layout. */
function table(caption: string, columns: string[], rows: Child[][], empty = 'None.'): HTMLElement {
  if (rows.length === 0) return h('div', {}, h('h2', {}, caption), h('p', {}, empty));
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((cell, i) => h('td', { 'data-label': columns[i] ?? '' }, cell))))),
  );
}

function dl(pairs: [string, Child][]): HTMLElement {
  const out = h('dl');
  for (const [k, v] of pairs) out.append(h('dt', {}, k), h('dd', {}, v));
  return out;
}

/** The heading a screen opens with: focused after navigation so a screen reader starts there. */
const title = (text: string): HTMLElement => h('h1', { tabindex: '-1' }, text);
const code = (text: string): HTMLElement => h('code', { title: text }, text);
const errorText = (e: unknown): string => (e instanceof ApiError ? `${e.message}${e.field ? ` (field: ${e.field})` : ''}` : e instanceof Error ? e.message : String(e));
const alertBox = (e: unknown): HTMLElement => h('p', { class: 'error', role: 'alert' }, errorText(e));

function announce(text: string): void {
  const s = $('status');
  s.textContent = '';
  // A fresh text node after a tick, so a repeated message is announced again.
  setTimeout(() => (s.textContent = text), 50);
}

// ------------------------------------------------------------------ unlock and lock

function lockedOut(why: string | null): void {
  token = null;
  $('nav').hidden = true;
  $('lock').hidden = true;
  $('screen').hidden = true;
  $('screen').replaceChildren();
  $('unlock').hidden = false;
  $('unlock-error').textContent = why ?? '';
  document.title = 'Unlock — Vault operator console';
  $<HTMLInputElement>('passphrase').focus();
}

async function unlock(ev: Event): Promise<void> {
  ev.preventDefault();
  const input = $<HTMLInputElement>('passphrase');
  const button = (ev.target as HTMLFormElement).querySelector('button') as HTMLButtonElement;
  $('unlock-error').textContent = '';
  button.disabled = true;
  try {
    const r = await api<{ token: string }>('POST', '/session/unlock', { passphrase: input.value });
    token = r.token;
    input.value = '';
    $('unlock').hidden = true;
    $('nav').hidden = false;
    $('lock').hidden = false;
    $('screen').hidden = false;
    if (location.hash === '' || location.hash === '#') location.hash = '#intents';
    else void route();
  } catch (e) {
    $('unlock-error').textContent = e instanceof ApiError && e.status === 401 ? 'Wrong passphrase.' : errorText(e);
    input.focus();
  } finally {
    button.disabled = false;
  }
}

async function lock(): Promise<void> {
  try {
    await api('POST', '/session/lock');
  } finally {
    lockedOut('Locked.');
  }
}

// ------------------------------------------------------------------ screens

/** `#name/arg?query` */
function parseHash(): { name: string; arg: string | undefined; query: URLSearchParams } {
  const raw = location.hash.replace(/^#/, '');
  const [path = '', q = ''] = raw.split('?', 2);
  const [name = '', ...rest] = path.split('/');
  return { name, arg: rest.length > 0 ? decodeURIComponent(rest.join('/')) : undefined, query: new URLSearchParams(q) };
}

let statusChoices: string[] | null = null;

/** The intent statuses GET /intents filters by, as the server's OpenAPI document lists them (read once). */
async function intentStatuses(): Promise<string[]> {
  if (statusChoices === null) {
    const doc = await api('GET', '/openapi.json');
    const params = arr(obj(obj(obj(doc['paths'])['/intents'])['get'])['parameters']);
    statusChoices = arr(obj(obj(params.find((p) => obj(p)['name'] === 'status'))['schema'])['enum']).map(str);
  }
  return statusChoices;
}

async function intentsScreen(_arg: string | undefined, query: URLSearchParams): Promise<Node> {
  const wallet = query.get('wallet') ?? '';
  const status = query.get('status') ?? '';
  // The server filters (over its newest intents, not just the page shown here).
  const filter = new URLSearchParams();
  if (wallet !== '') filter.set('wallet', wallet);
  if (status !== '') filter.set('status', status);
  const [shown, wallets, statuses] = await Promise.all([api<Json[]>('GET', `/intents${filter.size > 0 ? `?${filter}` : ''}`), api<Json[]>('GET', '/wallets'), intentStatuses()]);
  const select = (id: string, label: string, options: string[], value: string) =>
    h('div', { class: 'field' }, h('label', { for: id }, label), h('select', { id, name: id }, h('option', { value: '' }, 'any'), ...options.map((o) => h('option', { value: o, selected: o === value }, o))));
  const form = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Filter intents',
      onsubmit: (ev) => {
        ev.preventDefault();
        const f = new FormData(ev.target as HTMLFormElement);
        const p = new URLSearchParams();
        for (const k of ['wallet', 'status']) if (str(f.get(k)) !== '') p.set(k, str(f.get(k)));
        location.hash = `#intents${p.size > 0 ? `?${p}` : ''}`;
      },
    },
    select('wallet', 'Wallet', wallets.map((w) => str(w['wallet'])), wallet),
    select('status', 'Status', statuses, status),
    h('button', { type: 'submit' }, 'Filter'),
  );
  const rows = shown.map((i) => [
    h('a', { href: `#intent/${encodeURIComponent(str(i['intentId']))}`, 'aria-label': `Intent ${str(i['intentId'])}` }, short(str(i['intentId']))),
    str(i['wallet']),
    str(i['operation']),
    `${str(i['amount'])}${i['asset_symbol'] ? ` ${str(i['asset_symbol'])}` : ''}`,
    h('span', { class: `badge s-${str(i['status'])}` }, str(i['status'])),
    when(i['created_at']),
  ]);
  return h('div', {}, title('Intents'), form, h('p', {}, `${shown.length} intent${shown.length === 1 ? '' : 's'}${filter.size > 0 ? ' matching' : ''}, newest first (at most 100).`), table('Intents, newest first', ['Intent', 'Wallet', 'Operation', 'Amount', 'Status', 'Created'], rows, 'No intent matches.'));
}

/**
 * Execution runs these stages in this order (interface.md; the policy is re-evaluated first); a
 * refusal names the one it stopped at in `data.stage`.
 */
const STAGES = ['policy', 'params', 'protections', 'prepare', 'signers', 'assemble', 'submit', 'confirm', 'receipts'] as const;

function signersTable(signers: unknown[]): HTMLElement {
  return table(
    'Signers',
    ['Signer', 'Address', 'Signed', 'Detail'],
    signers.map((x) => {
      const s = obj(x);
      return [str(s['signer']), code(str(s['address'])), s['ok'] === true ? 'yes' : 'no', str(s['detail'])];
    }),
  );
}

/** The outcome of POST /intent/{id}/execute, stage by stage. */
function outcomeView(outcome: Json | null, error: ApiError | null): HTMLElement {
  const failedAt = error !== null ? str(error.data?.['stage']) : '';
  const status = outcome ? str(outcome['status']) : 'refused';
  // Where it stopped: a refusal names its stage; awaiting_signatures stops at signers; denied before any.
  const stop = failedAt !== '' ? STAGES.indexOf(failedAt as (typeof STAGES)[number]) : status === 'confirmed' ? STAGES.length : status === 'awaiting_signatures' ? STAGES.indexOf('signers') : status === 'denied' ? 0 : -1;
  const items = STAGES.map((stage, i) => {
    const state = stop === -1 ? 'unknown' : i < stop ? 'done' : i === stop ? (error ? 'refused' : status === 'awaiting_signatures' ? 'short of quorum' : 'stopped') : 'not reached';
    return h('li', { class: `stage st-${state.replace(/\s+/g, '-')}` }, h('span', { class: 'stage-name' }, stage), ': ', state);
  });
  const signers = arr(outcome ? outcome['signers'] : error?.data?.['signers']);
  return h(
    'section',
    { class: 'outcome', 'aria-labelledby': 'outcome-title' },
    h('h2', { id: 'outcome-title', tabindex: '-1' }, `Execute: ${status}`),
    error ? alertBox(error) : null,
    outcome ? dl([['Transaction', outcome['txHash'] ? code(str(outcome['txHash'])) : 'not submitted'], ['Weight', `${str(outcome['weight'])} of quorum ${str(outcome['quorum'])}`], ['Summary', str(outcome['summary'])]]) : null,
    h('ol', { class: 'stages', 'aria-label': 'Stages' }, ...items),
    signers.length > 0 ? signersTable(signers) : null,
  );
}

const FINAL = new Set(['confirmed', 'denied', 'cancelled', 'expired', 'submitted']);

/** What GET /intent/{id} and its receipts say: the facts, the approvals and the receipts. */
function intentDetails(id: string, r: Json, rec: Json): HTMLElement[] {
  const intent = obj(r['intent']);
  const decision = obj(r['decision']);
  const approvals = arr(r['approvals']).map((x) => {
    const a = obj(x);
    return [str(a['approver_id']), str(a['verdict']), when(a['at'])];
  });
  const receipts = arr(rec['receipts']).map((x) => {
    const c = obj(x);
    return [str(c['seq']), str(c['kind']), when(c['at']), code(str(c['hash'])), c['sig'] ? 'yes' : 'by the next checkpoint'];
  });
  return [
    dl([
      ['Id', code(id)],
      ['Status', h('span', { class: `badge s-${str(r['status'])}`, id: 'intent-status' }, str(r['status']))],
      ['Wallet', str(intent['wallet'])],
      ['Operation', str(obj(intent['operation'])['op'] ?? 'transfer')],
      ['Destination', code(str(intent['destination']))],
      ['Amount', `${str(intent['amount'])}${intent['asset_symbol'] ? ` ${str(intent['asset_symbol'])}` : ''} (minor units)`],
      ['Initiator', str(intent['initiator'])],
      ['Decision', `${str(decision['decision'])}${arr(decision['reasons']).length > 0 ? `: ${arr(decision['reasons']).map(str).join('; ')}` : ''}`],
      ['Approval weight', `${str(decision['current_weight'])} of ${str(decision['required_weight'])}`],
      ['Created', when(r['created_at'])],
      ['Expires', when(r['expires_at'])],
    ]),
    table('Approvals', ['Approver', 'Verdict', 'At'], approvals, 'No approval yet.'),
    table('Receipts of this intent', ['Seq', 'Kind', 'At', 'Hash', 'Signed'], receipts, 'No receipt.'),
  ];
}

async function intentScreen(id: string | undefined): Promise<Node> {
  if (!id) return h('div', {}, title('Intent'), h('p', {}, 'No intent named.'));
  const path = `/intent/${encodeURIComponent(id)}`;
  const read = () => Promise.all([api('GET', path), api('GET', `${path}/receipts`)]);
  const [r, rec] = await read();
  const [facts, approvals, receipts] = intentDetails(id, r, rec);
  const factsSlot = h('div', {}, facts);
  const listsSlot = h('div', {}, approvals, receipts);
  const outcomeSlot = h('div', { id: 'outcome' });
  const execution = obj(r['execution']);
  if (Object.keys(execution).length > 0) outcomeSlot.append(outcomeView(execution, null));
  const execute = h('button', { type: 'button', id: 'execute' }, 'Execute');
  execute.addEventListener('click', async () => {
    execute.disabled = true;
    execute.textContent = 'Executing…';
    announce('Executing…');
    let view: HTMLElement;
    try {
      view = outcomeView(await api('POST', `${path}/execute`), null);
    } catch (e) {
      if (!(e instanceof ApiError)) {
        view = h('section', { class: 'outcome' }, h('h2', { tabindex: '-1' }, 'Execute: no answer'), alertBox(e));
      } else view = outcomeView(null, e);
    }
    outcomeSlot.replaceChildren(view);
    execute.disabled = false;
    execute.textContent = 'Execute';
    // The status and the receipts moved with the execution: read them again.
    try {
      const [r2, rec2] = await read();
      const [f2, a2, c2] = intentDetails(id, r2, rec2);
      factsSlot.replaceChildren(f2 as HTMLElement);
      listsSlot.replaceChildren(a2 as HTMLElement, c2 as HTMLElement);
      if (FINAL.has(str(r2['status']))) execute.remove();
    } catch {
      // The outcome above is what matters; Refresh reads the intent again.
    }
    const heading = view.querySelector('h2');
    announce(heading?.textContent ?? 'Executed');
    heading?.focus();
  });
  return h(
    'div',
    {},
    title(`Intent ${short(id)}`),
    h('p', {}, h('a', { href: '#intents' }, 'Back to intents')),
    factsSlot,
    h('div', { class: 'actions' }, FINAL.has(str(r['status'])) ? null : execute, h('a', { href: `#intent/${encodeURIComponent(id)}?${Date.now()}`, class: 'button' }, 'Refresh')),
    outcomeSlot,
    listsSlot,
  );
}

async function createScreen(): Promise<Node> {
  const wallets = await api<Json[]>('GET', '/wallets');
  const result = h('div', { id: 'create-result' });
  const field = (name: string, label: string, hint: string, input: HTMLElement) => {
    input.setAttribute('id', `f-${name}`);
    input.setAttribute('name', name);
    input.setAttribute('aria-describedby', `f-${name}-hint f-${name}-error`);
    return h('div', { class: 'field' }, h('label', { for: `f-${name}` }, label), input, h('p', { id: `f-${name}-hint`, class: 'hint' }, hint), h('p', { id: `f-${name}-error`, class: 'error' }));
  };
  const form = h(
    'form',
    { novalidate: true, 'aria-labelledby': 'create-title', class: 'stack' },
    field('wallet', 'Wallet', 'The wallet that pays.', h('select', {}, ...wallets.map((w) => h('option', { value: str(w['wallet']) }, `${str(w['wallet'])} (${str(w['chain'])})`)))),
    field('destination', 'Destination', 'An address on the wallet\'s ledger.', h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' })),
    field('amount', 'Amount', 'In the asset\'s minor units (drops, stroops, wei), a whole number.', h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off' })),
    field('asset_symbol', 'Asset symbol (optional)', 'Empty: the ledger\'s native asset.', h('input', { type: 'text', autocomplete: 'off' })),
    field('memo', 'Memo (optional)', 'Shown to approvers.', h('input', { type: 'text', autocomplete: 'off' })),
    h('button', { type: 'submit' }, 'Create intent'),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    for (const el of form.querySelectorAll('p.error')) el.textContent = '';
    result.replaceChildren();
    const f = new FormData(form);
    // Empty optional fields are left out; everything else goes as typed: the server validates.
    const body: Json = {};
    for (const [k, v] of f.entries()) if (str(v) !== '') body[k] = str(v);
    try {
      const r = await api('POST', '/intent', body);
      const id = str(r['intentId']);
      result.replaceChildren(h('p', { role: 'status' }, `Created, status ${str(r['status'])}. `, h('a', { href: `#intent/${encodeURIComponent(id)}`, id: 'open-created' }, `Open intent ${short(id)}`)));
      (result.querySelector('a') as HTMLElement).focus();
    } catch (e) {
      // The 400 names the field (data.path, relative to the intent): mark it and move focus there.
      const name = e instanceof ApiError && e.field ? e.field.split('.')[0] ?? '' : '';
      const input = name !== '' ? form.querySelector<HTMLElement>(`#f-${CSS.escape(name)}`) : null;
      result.replaceChildren(alertBox(e));
      if (input) {
        input.setAttribute('aria-invalid', 'true');
        const msg = form.querySelector(`#f-${CSS.escape(name)}-error`);
        if (msg) msg.textContent = errorText(e);
        input.focus();
      }
    }
  });
  return h('div', {}, h('h1', { id: 'create-title', tabindex: '-1' }, 'New intent'), form, result);
}

async function estateScreen(): Promise<Node> {
  const r = await api('GET', '/estate');
  const parts = arr(r['wallets']).map((x) => {
    const w = obj(x);
    const rows = arr(w['balances']).map((y) => {
      const b = obj(y);
      const flags = Object.entries(obj(b['flags'])).filter(([, v]) => v === true).map(([k]) => k);
      return [str(b['symbol']), code(str(b['asset'])), str(b['amount']), str(b['decimals']), flags.join(', ')];
    });
    return h('section', {}, w['error'] ? h('p', { class: 'error' }, `${str(w['wallet'])}: ${str(w['error'])}`) : null, table(`${str(w['wallet'])} on ${str(w['chain'])}`, ['Symbol', 'Asset', 'Amount (minor units)', 'Decimals', 'Flags'], rows, 'No balance.'));
  });
  return h('div', {}, title('Estate'), h('p', {}, `Read from the ledgers at ${when(r['read_at'])}.`), ...parts);
}

async function reconcileScreen(arg: string | undefined): Promise<Node> {
  const wallets = await api<Json[]>('GET', '/wallets');
  const out = h('div', { id: 'reconcile-result' });
  const form = h(
    'form',
    { 'aria-label': 'Reconcile a wallet', onsubmit: (ev) => {
      ev.preventDefault();
      location.hash = `#reconcile/${encodeURIComponent(str(new FormData(ev.target as HTMLFormElement).get('wallet')))}`;
    } },
    h('div', { class: 'field' }, h('label', { for: 'r-wallet' }, 'Wallet'), h('select', { id: 'r-wallet', name: 'wallet' }, ...wallets.map((w) => h('option', { value: str(w['wallet']), selected: w['wallet'] === arg }, str(w['wallet']))))),
    h('button', { type: 'submit' }, 'Reconcile'),
  );
  if (arg) {
    try {
      const r = await api('GET', `/wallets/${encodeURIComponent(arg)}/reconcile`);
      const list = (v: unknown) => h('ul', {}, ...arr(v).map((d) => h('li', {}, h('code', {}, str(d)))));
      out.append(
        h('h2', {}, `${arg}: ${r['clean'] === true ? 'clean' : 'drift found'}`),
        dl([['Chain', str(r['chain'])], ['Checked', list(r['checked'])], ['Drift', arr(r['drift']).length > 0 ? list(r['drift']) : 'none']]),
      );
    } catch (e) {
      out.append(alertBox(e));
    }
  }
  return h('div', {}, title('Reconcile'), h('p', {}, 'Compares the wallet as the state file describes it with what its ledger says.'), form, out);
}

async function recoveryScreen(): Promise<Node> {
  const r = await api('GET', '/recovery/status');
  const rows = arr(r['wallets']).map((x) => {
    const w = obj(x);
    const survives = w['survives_loss_of_any_one_key'];
    return [str(w['wallet']), str(w['chain']), h('span', { class: `badge t-${str(w['tier'])}` }, str(w['tier'])), survives === null || survives === undefined ? 'unknown' : survives ? 'yes' : 'no', `${str(w['quorum'])} of ${str(w['total_weight'])}`, str(arr(w['critical_keys']).length), w['error'] ? str(w['error']) : arr(w['ways_around_quorum']).map(str).join(', ') || 'none'];
  });
  return h('div', {}, title('Recovery status'), h('p', {}, `Read from the ledgers at ${when(r['read_at'])}.`), table('Recovery tier per wallet', ['Wallet', 'Chain', 'Tier', 'Survives losing any one key', 'Quorum of weight', 'Critical keys', 'Ways around quorum'], rows));
}

async function devicesScreen(): Promise<Node> {
  const r = await api('GET', '/devices');
  const paired = h('div', { id: 'pairing' });
  const pairForm = h(
    'form',
    { 'aria-labelledby': 'pair-title', class: 'stack' },
    h('h2', { id: 'pair-title' }, 'Pair a device'),
    h('div', { class: 'field' }, h('label', { for: 'p-role' }, 'Role'), h('select', { id: 'p-role', name: 'role' }, ...['approver', 'initiator', 'viewer'].map((x) => h('option', { value: x }, x)))),
    h('div', { class: 'field' }, h('label', { for: 'p-label' }, 'Label'), h('input', { id: 'p-label', name: 'label', type: 'text', required: true, autocomplete: 'off' })),
    h('button', { type: 'submit' }, 'Create pairing code'),
  );
  pairForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = new FormData(pairForm);
    try {
      const p = await api('POST', '/pair/create', { role: str(f.get('role')), label: str(f.get('label')) });
      const c = str(p['code']);
      paired.replaceChildren(
        h('h3', { tabindex: '-1' }, `Pairing code ${c}`),
        h('p', {}, `Scan with the device's app within five minutes (until ${when(p['expires_at'])}). Role: ${str(p['role'])}.`),
        h('img', { src: `/pair/qr/${encodeURIComponent(c)}`, alt: `QR code to pair a device, code ${c}`, class: 'qr' }),
      );
      (paired.querySelector('h3') as HTMLElement).focus();
    } catch (e) {
      paired.replaceChildren(alertBox(e));
    }
  });
  const rows = arr(r['devices']).map((x) => {
    const d = obj(x);
    const id = str(d['id']);
    const cell = h('div', { class: 'actions' });
    const revoke = h('button', { type: 'button', 'aria-label': `Revoke ${str(d['label'])}` }, 'Revoke');
    // Two steps, both plain buttons (no modal dialog): Revoke, then Confirm or Cancel.
    revoke.addEventListener('click', () => {
      const confirm = h('button', { type: 'button', class: 'danger', 'aria-label': `Confirm revoking ${str(d['label'])}` }, 'Confirm revoke');
      const cancel = h('button', { type: 'button' }, 'Cancel');
      cancel.addEventListener('click', () => {
        cell.replaceChildren(revoke);
        revoke.focus();
      });
      confirm.addEventListener('click', async () => {
        try {
          await api('POST', `/devices/${encodeURIComponent(id)}/revoke`);
          announce(`${str(d['label'])} revoked.`);
          await route();
        } catch (e) {
          cell.replaceChildren(alertBox(e), revoke);
        }
      });
      cell.replaceChildren(confirm, cancel);
      confirm.focus();
    });
    if (d['revoked'] !== true) cell.append(revoke);
    return [str(d['label']), code(id), str(d['role']), when(d['paired_at']), d['revoked'] === true ? `revoked ${when(d['revoked_at'])}` : 'active', cell];
  });
  return h('div', {}, title('Devices'), table('Paired devices', ['Label', 'Id', 'Role', 'Paired', 'State', 'Action'], rows, 'No device paired.'), pairForm, paired);
}

async function verifyScreen(): Promise<Node> {
  const [v, recent] = await Promise.all([api('GET', '/ledger/verify'), api('GET', '/ledger/recent?limit=20')]);
  const ok = v['verified'] === true;
  const rows = arr(recent['receipts']).map((x) => {
    const c = obj(x);
    return [str(c['seq']), str(c['kind']), c['intentId'] ? h('a', { href: `#intent/${encodeURIComponent(str(c['intentId']))}` }, short(str(c['intentId']))) : '', when(c['at']), code(str(c['hash']))];
  });
  return h(
    'div',
    {},
    title('Receipt chain'),
    h('p', { class: ok ? 'ok' : 'error', id: 'verify-result' }, ok ? 'Verified: every receipt hashes to the next and the checkpoints carry valid signatures.' : `Not verified: ${str(v['problem'] ?? 'unknown problem')}${v['at'] !== undefined ? ` at receipt ${str(v['at'])}` : ''}.`),
    dl([['Receipts', str(v['receipts'])], ['Head', code(str(v['head']))], ['Signing key', code(str(v['signerPublicKey']))]]),
    h('p', {}, h('a', { href: `#verify?${Date.now()}`, class: 'button' }, 'Verify again')),
    table('Newest receipts', ['Seq', 'Kind', 'Intent', 'At', 'Hash'], rows),
  );
}

const SCREENS: Record<string, { nav: string; render: (arg: string | undefined, query: URLSearchParams) => Promise<Node> }> = {
  intents: { nav: 'intents', render: intentsScreen },
  intent: { nav: 'intents', render: (arg) => intentScreen(arg) },
  create: { nav: 'create', render: createScreen },
  estate: { nav: 'estate', render: estateScreen },
  reconcile: { nav: 'reconcile', render: reconcileScreen },
  recovery: { nav: 'recovery', render: recoveryScreen },
  devices: { nav: 'devices', render: devicesScreen },
  verify: { nav: 'verify', render: verifyScreen },
};

let renders = 0;

async function route(): Promise<void> {
  if (token === null) return;
  const { name, arg, query } = parseHash();
  const screen = SCREENS[name] ?? SCREENS['intents']!;
  const mine = ++renders;
  const root = $('screen');
  root.setAttribute('aria-busy', 'true');
  let node: Node;
  try {
    node = await screen.render(arg, query);
  } catch (e) {
    if (token === null) return;
    node = h('div', {}, title('Something went wrong'), alertBox(e));
  }
  // A newer navigation won the race: its screen is the one to show.
  if (mine !== renders || token === null) return;
  root.replaceChildren(node);
  root.removeAttribute('aria-busy');
  for (const a of $('nav').querySelectorAll('a')) {
    if (a.getAttribute('href') === `#${screen.nav}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const heading = root.querySelector('h1');
  document.title = `${heading?.textContent ?? 'Console'} — Vault operator console`;
  heading?.focus();
}

function start(): void {
  $('unlock-form').addEventListener('submit', (ev) => void unlock(ev));
  $('lock').addEventListener('click', () => void lock());
  window.addEventListener('hashchange', () => void route());
  // Choosing the screen already shown reads it again (no hashchange fires for the same hash).
  $('nav').addEventListener('click', (ev) => {
    const a = (ev.target as HTMLElement).closest('a');
    if (a !== null && a.getAttribute('href') === location.hash) void route();
  });
  lockedOut(null);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
