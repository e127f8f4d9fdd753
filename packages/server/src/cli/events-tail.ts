/**
 * @module cli/events-tail
 * `vault events tail`: follows the control plane's event stream and prints one line per event,
 * `<id> <time> <type> <subject> <key=value…>`, resuming after the last printed event when the
 * connection drops or the control plane restarts (it unlocks again when it holds the passphrase).
 */
import { createControlPlaneClient, EventIdSchema, EVENT_TYPES, IntentIdSchema, parseWith, ValidationError, type EventFilter, type VaultEvent } from '@vault/sdk';
import { z } from 'zod';

export interface TailOptions {
  url: string;
  /** Unlocks (and unlocks again after a restart) with the operator passphrase… */
  passphrase?: string | undefined;
  /** …or uses this session token as it is. */
  token?: string | undefined;
  after?: string | undefined;
  filter: EventFilter;
  signal?: AbortSignal | undefined;
  /** Where lines go (stdout) and notes (stderr). */
  out: (line: string) => void;
  note: (line: string) => void;
  reconnectDelayMs?: number | undefined;
}

const SCALAR_FIELDS = ['status', 'from', 'to', 'verdict', 'approver_id', 'signer', 'ok', 'detail', 'stage', 'code', 'txHash', 'weight', 'quorum', 'digest', 'by', 'role', 'label', 'state_digest'] as const;

/** Keeps a printed value on one line and short: no control characters, at most 80 characters. */
function shown(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ');
  return clean.length > 80 ? `${clean.slice(0, 79)}…` : clean;
}

/** One line: `<id> <ISO time> <type> <subject> key=value…` (the fields each type is about). */
export function formatEventLine(e: VaultEvent): string {
  const subject = (['intent', 'wallet', 'device', 'state'] as const)
    .filter((k) => e.subject[k] !== undefined)
    .map((k) => `${k}=${shown(e.subject[k])}`)
    .join(',');
  const fields = SCALAR_FIELDS.filter((k) => e.data[k] !== undefined && e.data[k] !== null && typeof e.data[k] !== 'object').map((k) => `${k}=${shown(e.data[k])}`);
  if (e.type === 'intent.created' || e.type === 'intent.status_changed') {
    const d = e.data['decision'] as { decision?: unknown } | undefined;
    if (d?.decision !== undefined) fields.push(`decision=${shown(d.decision)}`);
  }
  return [e.id, new Date(e.at * 1000).toISOString(), e.type, subject, ...fields].join(' ');
}

const TypesSchema = z
  .string()
  .transform((s) => s.split(',').filter((t) => t !== ''))
  .pipe(z.array(z.enum(Object.keys(EVENT_TYPES) as [string, ...string[]], 'unknown event type')).min(1).max(32));

/** The filter from the command line's flags, each checked (a 400 from the server would say the same, later). */
export function tailFilter(flags: { types?: string | undefined; wallet?: string | undefined; intent?: string | undefined }): EventFilter {
  const f: EventFilter = {};
  if (flags.types !== undefined) f.types = parseWith(TypesSchema, flags.types, 'types');
  if (flags.wallet !== undefined) f.wallet = parseWith(z.string().min(1).max(128), flags.wallet, 'wallet');
  if (flags.intent !== undefined) f.intent = parseWith(IntentIdSchema, flags.intent, 'intent');
  return f;
}

/** Follows until `signal` aborts (or the session cannot be renewed). */
export async function tailEvents(o: TailOptions): Promise<void> {
  if (o.after !== undefined) parseWith(EventIdSchema, o.after, 'after');
  if (o.passphrase === undefined && o.token === undefined) {
    throw new ValidationError('session', [{ path: '', message: 'set VAULT_OPERATOR_PASSPHRASE (or VAULT_SESSION_TOKEN)' }]);
  }
  const cp = createControlPlaneClient({ baseUrl: o.url, ...(o.token !== undefined ? { token: o.token } : {}) });
  const passphrase = o.passphrase;
  // With a passphrase, the first connection unlocks through reauthenticate (and so waits for a
  // control plane that is not up yet, as after a restart).
  const events = cp.events();
  for await (const e of events.follow({
    after: o.after,
    filter: o.filter,
    signal: o.signal,
    reconnectDelayMs: o.reconnectDelayMs,
    onReconnect: (err, after) => o.note(`reconnecting after ${after ?? 'the start'} (${err instanceof Error ? err.message : 'closed'})`),
    reauthenticate:
      passphrase === undefined
        ? undefined
        : async () => {
            try {
              await cp.unlock(passphrase);
              return true;
            } catch {
              return true; // not up yet: try again after the delay
            }
          },
  })) {
    o.out(formatEventLine(e));
  }
}
