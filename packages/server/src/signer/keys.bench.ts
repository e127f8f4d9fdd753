/**
 * One signature through each key backend, in one run: the PKCS#11 backend on a SoftHSM2 token
 * (ed25519 through CKM_EDDSA, secp256k1 through CKM_ECDSA plus the low-S normalisation, recovery id
 * and @noble/curves verification the backend adds) beside the software keystore's SigningKey
 * (node:crypto ed25519, noble secp256k1). What a signer pays per signature for keeping the key in
 * a token; a YubiHSM 2 over USB or a network HSM adds its own round trip on top (tens of ms).
 * Prints signs/s and p50 for each.
 * Run: `pnpm bench` (or `npx vitest bench --run src/signer/keys.bench.ts`).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import type { SigningKey } from '@vault/sdk';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { ensureSoftHsm, initSoftToken, type SoftToken } from '../../../../scripts/softhsm.mjs';
import { generateSecret, softwareSigningKey } from './keystore.js';
import { generateTokenKey, Pkcs11Backend, Pkcs11ConfigSchema } from './pkcs11.js';

const PIN = 'bench-pin-2291';
let token: SoftToken;
let backend: Pkcs11Backend;
const keys: Record<string, SigningKey> = {};
const latency: Record<string, number[]> = {};
/** A payload-sized message (an XRPL multisigning blob is about this long). */
const MESSAGE = new Uint8Array(220).fill(0x5a);
let counter = 0;

beforeAll(async () => {
  ensureSoftHsm();
  token = initSoftToken({ label: 'vault-bench', pin: PIN });
  process.env['SOFTHSM2_CONF'] = token.conf;
  const config = Pkcs11ConfigSchema.parse({ format: 'vault-signer-pkcs11', version: 1, module: token.module, token_label: 'vault-bench', keys: [{ label: 'ed' }, { label: 'k1' }] });
  generateTokenKey(config, PIN, { curve: 'ed25519', label: 'ed' });
  generateTokenKey(config, PIN, { curve: 'secp256k1', label: 'k1' });
  backend = await Pkcs11Backend.open(config, { pin: PIN });
  for (const k of backend.list()) keys[`pkcs11 ${k.curve}`] = backend.signingKey(k.publicKeyHex) as SigningKey;
  keys['software ed25519'] = softwareSigningKey('ed25519', generateSecret('ed25519'));
  keys['software secp256k1'] = softwareSigningKey('secp256k1', generateSecret('secp256k1'));
});

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

afterAll(() => {
  const rows = Object.entries(latency).map(([name, xs]) => {
    const total = xs.reduce((a, b) => a + b, 0);
    return `  ${name.padEnd(20)} ${(xs.length / (total / 1000)).toFixed(0).padStart(7)} signs/s   p50 ${pct(xs, 50).toFixed(3)} ms   p99 ${pct(xs, 99).toFixed(3)} ms   (${xs.length} signatures, one at a time)`;
  });
  console.log(`\nkey backends (SoftHSM2 over PKCS#11 vs the software keystore)\n${rows.join('\n')}`);
  backend?.close();
  if (token) rmSync(token.dir, { recursive: true, force: true });
});

async function timed(name: string): Promise<void> {
  const key = keys[name] as SigningKey;
  // ed25519 signs the message; secp256k1 a fresh 32-byte digest each time (what a driver hands in).
  const message = key.curve === 'ed25519' ? MESSAGE : sha256(new Uint8Array([counter & 0xff, (counter++ >> 8) & 0xff, 1, 2]));
  const t0 = performance.now();
  await key.sign(message);
  (latency[name] ??= []).push(performance.now() - t0);
}

describe('SigningKey.sign: PKCS#11 (SoftHSM2) beside the software keystore', () => {
  for (const name of ['software ed25519', 'pkcs11 ed25519', 'software secp256k1', 'pkcs11 secp256k1']) {
    bench(name, () => timed(name), { time: 1500, warmupTime: 200 });
  }
});
