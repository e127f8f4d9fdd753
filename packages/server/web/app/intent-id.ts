/**
 * @module web/app/intent-id
 * What the app shows is what it signs. An approval names an intent by its id, the SHA-256 of the
 * intent's canonical JSON (the SDK's intentId), and the signers count it for that content only; a
 * control plane that sent other content under the id would have the person approve a transfer
 * they never saw. So the id is recomputed here, with WebCrypto, from the intent as received.
 */
import { canonicalize, normalizeIntent } from '@vault/sdk';

/** `int_` + SHA-256(JCS(normalizeIntent(intent))), as the SDK's intentId computes it. */
export async function intentIdOf(intent: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalize(normalizeIntent(intent)));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return `int_${Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** Throws unless `intent` is the content of intent `id` (nothing is shown or signed then). */
export async function assertIntentIs(id: string, intent: unknown): Promise<void> {
  let computed: string;
  try {
    computed = await intentIdOf(intent);
  } catch {
    throw new Error(`the control plane sent an intent that cannot be read as ${id}: not shown, not signed`);
  }
  if (computed !== id) throw new Error(`the control plane sent the content of ${computed}, not of ${id}: not shown, not signed`);
}
