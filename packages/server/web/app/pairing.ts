/**
 * @module web/app/pairing
 * Reading a pairing code, whichever way it reached the app. Only the code and the challenge are
 * taken: the app always talks to the origin it was loaded from (the CSP allows no other), whatever
 * URL a QR names.
 */

/**
 * The pairing code as the control plane's QR carries it (JSON `{url, code, challenge}`), as
 * `npm start` prints it (`code.challenge`), or as its link (`…/app/#pair=code.challenge`).
 */
export function parsePairing(text: string): { code: string; challenge: string } {
  let t = text.trim();
  // A code is about 90 characters, the QR's JSON a few hundred: anything longer is not one.
  if (t.length > 2048) throw new Error('the pairing code is too long to be one');
  const link = /#pair=([A-Za-z0-9_.-]+)$/.exec(t);
  if (link) t = link[1]!;
  let code: unknown;
  let challenge: unknown;
  if (t.startsWith('{')) {
    try {
      ({ code, challenge } = JSON.parse(t) as { code?: unknown; challenge?: unknown });
    } catch {
      throw new Error('the pairing code is not valid JSON');
    }
  } else {
    const parts = t.split('.');
    if (parts.length !== 2) throw new Error('the pairing code is <code>.<challenge>');
    [code, challenge] = parts;
  }
  if (typeof code !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(code)) throw new Error('the pairing code is not one this vault printed');
  if (typeof challenge !== 'string' || !/^[0-9a-f]{64}$/.test(challenge)) throw new Error('the pairing code has no challenge (paste all of it)');
  return { code, challenge };
}
