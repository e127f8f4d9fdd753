/**
 * @module web/app/passkey
 * The browser side of passkeys (wire shapes: SignedApproval.webauthn, POST /pair/claim passkey).
 * Registered at pairing with the pairing challenge; asserted at each strong approval with
 * base64url(SHA-256(approvalMessage(statement))) as the challenge, so the assertion is bound to
 * exactly the statement the device key signs. ES256 only, user verification required; the DER
 * signature is sent with a low S (verifiers refuse the malleable high-S twin).
 */
import { approvalMessage, type ApprovalStatement } from '@vault/sdk';
import { p256 } from '@noble/curves/nist.js';

export function b64url(bytes: ArrayBuffer | Uint8Array): string {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
export function fromB64url(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

/** Whether this browser has a user-verifying authenticator to make a passkey with. */
export async function passkeysAvailable(): Promise<boolean> {
  try {
    return typeof PublicKeyCredential !== 'undefined' && (await PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable());
  } catch {
    return false;
  }
}

/** A DER ECDSA P-256 signature with S in the lower half of the order (the same signature, low-S form). */
export function lowS(der: Uint8Array): Uint8Array {
  const sig = p256.Signature.fromBytes(der, 'der');
  if (!sig.hasHighS()) return der;
  return new p256.Signature(sig.r, p256.Point.CURVE().n - sig.s).toBytes('der');
}

/** Registers a passkey for this device; `challenge` is the pairing challenge's 32 bytes. */
export async function registerPasskey(challenge: Uint8Array<ArrayBuffer>, label: string): Promise<{ credential_id: string; attestation_object: string; client_data_json: string }> {
  const cred = (await navigator.credentials.create({
    publicKey: {
      challenge,
      rp: { id: location.hostname, name: 'Vault approver' },
      user: { id: crypto.getRandomValues(new Uint8Array(16)), name: label, displayName: label },
      pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
      authenticatorSelection: { userVerification: 'required', residentKey: 'preferred' },
      attestation: 'none',
      timeout: 120_000,
    },
  })) as PublicKeyCredential | null;
  if (!cred) throw new Error('no passkey was created');
  const res = cred.response as AuthenticatorAttestationResponse;
  return { credential_id: b64url(cred.rawId), attestation_object: b64url(res.attestationObject), client_data_json: b64url(res.clientDataJSON) };
}

/** The passkey challenge of a statement: base64url(SHA-256(approvalMessage(statement))) as bytes. */
export async function passkeyChallengeBytes(statement: ApprovalStatement): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', approvalMessage(statement) as Uint8Array<ArrayBuffer>));
}

/** An assertion over `statement` by the passkey registered at pairing: SignedApproval.webauthn. */
export async function assertPasskey(statement: ApprovalStatement, credentialId: string): Promise<{ credential_id: string; authenticator_data: string; client_data_json: string; signature: string }> {
  const cred = (await navigator.credentials.get({
    publicKey: {
      challenge: await passkeyChallengeBytes(statement),
      rpId: location.hostname,
      allowCredentials: [{ type: 'public-key', id: fromB64url(credentialId) }],
      userVerification: 'required',
      timeout: 120_000,
    },
  })) as PublicKeyCredential | null;
  if (!cred) throw new Error('the passkey gave no assertion');
  const res = cred.response as AuthenticatorAssertionResponse;
  return {
    credential_id: b64url(cred.rawId),
    authenticator_data: b64url(res.authenticatorData),
    client_data_json: b64url(res.clientDataJSON),
    signature: b64url(lowS(new Uint8Array(res.signature))),
  };
}
